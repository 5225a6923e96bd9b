"""DSME beside LoRaWAN class A on the same radio, placement and items (issue 23).

One workload (default: 10 nodes, one 8-byte item per node every 10 minutes, 2600 mAh),
each MAC configuration on its engine, each with our datasheet energy and with the energy
measured on that MAC's firmware (DSME-LoRa's for DSME, Casals et al.'s for class A).
Prints delivery, latency p50/p95, LoRa frames per delivered item and lifetime side by
side; writes ``results/dticn-mac-compare.json`` and ``.png``.

    python dticn/benchmarks/bench_mac_compare.py [--nodes 10] [--interval 10m] [--days 1]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import track
from rich.table import Table

from dticn.radio.engines import run
from dticn.radio.scenario import Scenario, parse_duration

RESULTS = Path(__file__).parent / "results"

#: (label, scenario changes, measured profile of that MAC, None: none exists).
CONFIGS: tuple[tuple[str, dict[str, Any], str | None], ...] = (
    ("DSME SO3 MO5 BO5", {"so": 3, "mo": 5, "bo": 5}, "dsme-lora"),
    ("DSME SO3 MO7 BO7", {"so": 3, "mo": 7, "bo": 7}, "dsme-lora"),
    ("DSME SO3 MO7 BO9", {"so": 3, "mo": 7, "bo": 9}, "dsme-lora"),
    ("LoRaWAN A SF7 unconfirmed", {"mac": "lorawan-a"}, "casals-class-a"),
    ("LoRaWAN A SF7 confirmed", {"mac": "lorawan-a", "confirmed": True}, "casals-class-a"),
    ("LoRaWAN A SF12 unconfirmed", {"mac": "lorawan-a", "sf": 12}, "casals-class-a"),
    ("LoRaWAN A SF12 confirmed", {"mac": "lorawan-a", "sf": 12, "confirmed": True},
     "casals-class-a"),
    ("LoRaWAN B SF7 confirmed", {"mac": "lorawan-b", "confirmed": True}, None),
    ("LoRaWAN B SF12 confirmed", {"mac": "lorawan-b", "sf": 12, "confirmed": True}, None),
)


def frames_per_item(result: Any) -> float:
    """LoRa frames on air (nodes' and gateway's) per delivered item."""
    gw = result.gateway
    gateway_frames = gw.get("beacons", 0) + gw.get("acks", 0)
    delivered = sum(n.delivered for n in result.nodes)
    return (result.frames + gateway_frames) / delivered if delivered else float("nan")


def measure(label: str, scenario: Scenario) -> dict[str, Any]:
    result = run(scenario)
    summary = result.summary()
    lat = np.concatenate([n.latencies_s for n in result.nodes])
    return {"config": label, "mac": scenario.mac, "energy_profile": scenario.energy_profile,
            "delivery": summary["delivery_ratio"],
            "latency_p50_s": float(np.percentile(lat, 50)) if len(lat) else float("nan"),
            "latency_p95_s": float(np.percentile(lat, 95)) if len(lat) else float("nan"),
            "frames_per_item": frames_per_item(result),
            "lifetime_days": summary["lifetime_days_min"], "engine": result.engine,
            "scenario": scenario.as_dict()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10)
    parser.add_argument("--interval", default="10m")
    parser.add_argument("--payload", type=int, default=8)
    parser.add_argument("--days", type=float, default=1.0)
    parser.add_argument("--battery-mah", type=float, default=2600.0)
    args = parser.parse_args()
    interval = parse_duration(args.interval)
    base = Scenario(nodes=args.nodes, duration_s=args.days * 86_400.0,
                    traffic=f"periodic:{interval!r}s", payload_bytes=args.payload,
                    battery_mah=args.battery_mah)
    console = Console(width=None if Console().is_terminal else 150)
    wall = time.perf_counter()
    rows = []
    jobs = [(label, changes, profile) for label, changes, measured in CONFIGS
            for profile in ("optimised", measured) if profile is not None]
    for label, changes, profile in track(jobs, description="simulating", console=console,
                                         transient=True):
        rows.append(measure(label, base.with_(**changes, energy_profile=profile)))
    table = Table(title=f"{args.nodes} nodes, one {args.payload}-byte item per node every "
                        f"{args.interval}, {args.battery_mah:g} mAh, {args.days:g} d simulated")
    for col in ("configuration", "energy", "delivery", "latency p50 s", "latency p95 s",
                "LoRa frames / item", "lifetime days"):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(r["config"], r["energy_profile"], f"{r['delivery']:.4f}",
                      f"{r['latency_p50_s']:.2f}", f"{r['latency_p95_s']:.2f}",
                      f"{r['frames_per_item']:.2f}", f"{r['lifetime_days']:.0f}")
    console.print(table)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip()
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / "dticn-mac-compare.json"
    out.write_text(json.dumps({"commit": commit, "wall_s": time.perf_counter() - wall,
                               "args": vars(args), "rows": rows}, indent=1))
    _plot(rows, out.with_suffix(".png"))
    console.print(f"wrote {out} and .png ({time.perf_counter() - wall:.0f} s)")
    return 0


def _plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    for r in rows:
        marker = "s" if r["mac"] == "dsme" else "o"
        filled = r["energy_profile"] == "optimised"
        ax.scatter(r["latency_p95_s"], r["lifetime_days"], marker=marker,
                   facecolors=None if filled else "none",
                   edgecolors="tab:blue" if r["mac"] == "dsme" else "tab:red")
        ax.annotate(f"{r['config']} ({r['energy_profile']})", (r["latency_p95_s"],
                    r["lifetime_days"]), fontsize=6, xytext=(4, 2), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("latency p95 (s)")
    ax.set_ylabel("lifetime (days)")
    ax.set_title("DSME (squares) and LoRaWAN class A (circles): filled = datasheet energy, "
                 "open = measured firmware", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
