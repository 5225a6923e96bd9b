"""LoRaWAN class A against its published anchors: pure ALOHA, LoRaSim's experiment 0 (simple
and full collision modes) and Casals et al.'s lifetime.

Prints the tables, writes ``results/dticn-lorawan-anchors.json`` and ``.png``; exits 1
when a target of issue 23 is missed (ALOHA within 2 points of e^(-2G) with a 95% CI under
1 point; LoRaSim's DER within 2 points in both modes; Casals' 1 year at one message per
5 min within 15%).

    python dticn/benchmarks/bench_lorawan_anchors.py [--frames 10000] [--quick]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from dticn.validation.lorawan_anchors import (
    CASALS_ASYMPTOTE_YEARS,
    aloha_curve,
    casals_lifetime,
    lorasim_point,
    lorasim_reference,
)

RESULTS = Path(__file__).parent / "results"
LOADS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=10_000,
                        help="frames per ALOHA point (10,000 gives a 95%% CI under 1 point)")
    parser.add_argument("--quick", action="store_true", help="three loads, 2,000 frames")
    args = parser.parse_args()
    loads = (0.1, 0.5, 1.0) if args.quick else LOADS
    frames = 2_000 if args.quick else args.frames
    console = Console(width=None if Console().is_terminal else 150)
    wall = time.perf_counter()
    with Progress(console=console, transient=True) as bar:
        task = bar.add_task("pure ALOHA", total=len(loads))
        points = aloha_curve(loads, frames=frames, progress=lambda p: bar.advance(task))
        counts = sorted(lorasim_reference()["simple"])
        if args.quick:
            counts = counts[::3]
        task3 = bar.add_task("LoRaSim experiment 0", total=2 * len(counts))
        lorasim = []
        for full in (False, True):
            for n in counts:
                lorasim.append(lorasim_point(n, full=full, frames=frames * 5))
                bar.advance(task3)
        task2 = bar.add_task("Casals lifetime", total=2)
        five_min = casals_lifetime(300.0)
        bar.advance(task2)
        daily = casals_lifetime(86_400.0, days=30.0)
        bar.advance(task2)

    table = Table(title=f"Pure ALOHA: LoRaWAN class A, 1 channel, SF7, no capture, "
                        f"Poisson ({frames} frames a point)")
    for col in ("G target", "nodes", "frames", "G measured", "delivery", "95% CI",
                "e^-2G", "e^-2G(N-1)/N", "error pts", "S = G x delivery"):
        table.add_column(col, justify="right")
    aloha_ok = True
    for p in points:
        ok = abs(p.error_points) <= 2.0 and 100 * p.ci95 < 1.0
        aloha_ok &= ok
        table.add_row(f"{p.target_g:.1f}", str(p.nodes), str(p.frames), f"{p.measured_g:.3f}",
                      f"{p.delivery:.4f}", f"+-{100 * p.ci95:.2f} pts", f"{p.aloha:.4f}",
                      f"{p.aloha_finite:.4f}", f"{p.error_points:+.2f}", f"{p.throughput:.4f}",
                      style=None if ok else "red")
    console.print(table)
    peak = max(points, key=lambda p: p.throughput)
    console.print(f"throughput peak {peak.throughput:.4f} at G = {peak.measured_g:.2f} "
                  "(pure ALOHA: 0.1839 at G = 0.5)")

    ls_table = Table(title=f"LoRaSim experiment 0 (SF12, CR 4/8, 20 B, one frequency, its "
                           f"98.95 m disc): DER, ours ({frames * 5} frames a point) beside "
                           "LoRaSim 0.2.1's own (3 runs, about 150,000 packets)")
    for col in ("mode", "nodes", "G", "ours", "95% CI", "LoRaSim", "95% CI", "error pts"):
        ls_table.add_column(col, justify="right")
    lorasim_ok = True
    for p in lorasim:
        ok = abs(p.error_points) <= 2.0
        lorasim_ok &= ok
        ls_table.add_row("full" if p.full else "simple", str(p.nodes), f"{p.offered_g:.3f}",
                         f"{p.der:.4f}", f"+-{100 * p.ci95:.2f} pts", f"{p.lorasim_der:.4f}",
                         f"+-{100 * p.lorasim_ci95:.2f} pts", f"{p.error_points:+.2f}",
                         style=None if ok else "red")
    console.print(ls_table)

    life = Table(title="Casals et al. (Sensors 2017): class A, SF7, 8 B unconfirmed, 2400 mAh, "
                       "their measured energy")
    for col in ("period", "lifetime (years)", "published", "error", "mean current mA"):
        life.add_column(col, justify="right")
    casals_ok = five_min.error is not None and abs(five_min.error) <= 0.15
    life.add_row("5 min", f"{five_min.lifetime_years:.3f}", "about 1", f"{five_min.error:+.1%}",
                 f"{five_min.avg_current_ma:.4f}", style=None if casals_ok else "red")
    asym_error = daily.lifetime_years / CASALS_ASYMPTOTE_YEARS - 1
    life.add_row("1 day", f"{daily.lifetime_years:.3f}", "about 6 (asymptote)",
                 f"{asym_error:+.1%}", f"{daily.avg_current_ma:.4f}")
    console.print(life)

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip()
    out = {"commit": commit, "wall_s": time.perf_counter() - wall, "frames": frames,
           "aloha": [p.as_dict() for p in points],
           "lorasim": [p.as_dict() for p in lorasim],
           "casals": {"five_min": five_min.as_dict(), "daily": daily.as_dict(),
                      "asymptote_years": CASALS_ASYMPTOTE_YEARS},
           "targets": {"aloha_within_2_points": aloha_ok,
                       "lorasim_within_2_points": lorasim_ok,
                       "casals_within_15pct": casals_ok}}
    RESULTS.mkdir(exist_ok=True)
    stem = "dticn-lorawan-anchors-quick" if args.quick else "dticn-lorawan-anchors"
    (RESULTS / f"{stem}.json").write_text(json.dumps(out, indent=1))
    _plot(points, lorasim, RESULTS / f"{stem}.png")
    console.print(f"wrote {RESULTS / stem}.json and .png ({out['wall_s']:.0f} s)")
    return 0 if aloha_ok and lorasim_ok and casals_ok else 1


def _plot(points: list, lorasim: list, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    g = np.linspace(0.02, 1.1, 200)
    fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(15, 4))
    ax1.plot(g, np.exp(-2 * g), "k-", label="pure ALOHA e^(-2G)")
    ax1.errorbar([p.measured_g for p in points], [p.delivery for p in points],
                 yerr=[p.ci95 for p in points], fmt="o", label="LoRaWAN class A (events)")
    ax1.set_xlabel("offered load G")
    ax1.set_ylabel("frames delivered / sent")
    ax1.legend()
    ax2.plot(g, g * np.exp(-2 * g), "k-", label="G e^(-2G)")
    ax2.plot([p.measured_g for p in points], [p.throughput for p in points], "o",
             label="measured")
    ax2.set_xlabel("offered load G")
    ax2.set_ylabel("throughput S")
    ax2.legend()
    for full, marker in ((False, "o"), (True, "s")):
        pts = [p for p in lorasim if p.full == full]
        mode = "full" if full else "simple"
        ax3.plot([p.nodes for p in pts], [p.lorasim_der for p in pts], "k" + marker,
                 mfc="none", label=f"LoRaSim 0.2.1, {mode}")
        ax3.errorbar([p.nodes for p in pts], [p.der for p in pts],
                     yerr=[p.ci95 for p in pts], fmt=marker, ms=4, label=f"ours, {mode}")
    ax3.set_xlabel("nodes (experiment 0, one packet per node every 1,000 s)")
    ax3.set_ylabel("data extraction rate")
    ax3.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
