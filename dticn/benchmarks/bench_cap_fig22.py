"""CAP delivery and delay against DSME-LoRa's Fig. 22 (issue 16, item 2): ours beside theirs.

DSME-LoRa (Alamos et al., ACM TOSN 2022, arXiv 2206.14077), Fig. 22, OMNeT++/FLoRa, MO 5,
confirmed frames, nodes 10 m from the sink: CAP delivery 95% (100 nodes, one frame per
80 s), ~60% (100, 40 s), ~38% (300, 80 s), ~14% (300, 40 s); most CAP delays under 10 s
(read off the figure as recorded in docs/dticn-facts.md; "~" values are read from a plot).

Ours: the event engine, all node traffic in the CAP (``slot="cap"``), SO 3, MO = BO = 5,
SF7, 20-byte items, 10 m disc, Poisson arrivals at the given mean (the figure's arrival
process is not in our notes), under both CAP plans (:mod:`dticn.radio.cap_plan`):
``model`` (beacons and CAP on a 1% channel, off-time after every frame, no queue limit)
and ``dsme-lora`` (10% sub-band channel, hourly budget, CAP queue of 8). Short runs:
SEEDS seeds x HORIZON_S per point (the paper's runs are longer); items still queued at the
horizon count as not delivered. Delivery = delivered / generated; delay = generation to
reception at the sink.

Run: ``python benchmarks/bench_cap_fig22.py [--seeds N] [--horizon S]`` from ``dticn/``;
writes ``benchmarks/results/dticn-fig22.json`` and ``.png``.

``dticn validate`` (docs/dticn-validation.md) goes further: 16-byte items as their
simulation's ``packetLength``, the GTS side, their simulation's own layout (hosts on rings
10 m apart, not all 10 m from the sink) and channel, and their settings one at a time.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from dticn.radio.network import RadioNetwork
from dticn.radio.scenario import Scenario

#: (nodes, mean seconds between frames) -> their CAP delivery ratio (Fig. 22).
THEIRS = {(100, 80): 0.95, (100, 40): 0.60, (300, 80): 0.38, (300, 40): 0.14}
PLANS = ("model", "dsme-lora")
SEEDS = 2
HORIZON_S = 3600.0
RESULTS = Path(__file__).parent / "results"


def scenario(nodes: int, interval_s: int, plan: str, seed: int, horizon_s: float) -> Scenario:
    # 16 receive chains: every node keeps its (unused) uplink GTS at 300 nodes.
    return Scenario(nodes=nodes, duration_s=horizon_s, traffic=f"poisson:{interval_s}s",
                    slot="cap", so=3, mo=5, bo=5, radius_m=10.0, rx_chains=16,
                    cap_plan=plan, engine="events", seed=seed)


def point(nodes: int, interval_s: int, plan: str, seeds: int, horizon_s: float
          ) -> dict[str, Any]:
    generated = delivered = drops = collisions = 0
    latencies = []
    for seed in range(1, seeds + 1):
        result = RadioNetwork(scenario(nodes, interval_s, plan, seed, horizon_s)).run()
        s = result.summary()
        generated += s["generated"]
        delivered += s["delivered"]
        drops += s["queue_drops"]
        collisions += s["collisions"]
        latencies.extend(np.concatenate([n.latencies_s for n in result.nodes]).tolist())
    lat = np.asarray(latencies)
    p50, p90 = (np.percentile(lat, [50, 90]) if len(lat) else (float("nan"),) * 2)
    return {"nodes": nodes, "interval_s": interval_s, "cap_plan": plan, "seeds": seeds,
            "horizon_s": horizon_s, "generated": generated, "delivered": delivered,
            "delivery_ratio": delivered / generated if generated else float("nan"),
            "theirs_delivery_ratio": THEIRS[(nodes, interval_s)],
            "delay_p50_s": float(p50), "delay_p90_s": float(p90),
            "delay_share_under_10s": float((lat < 10.0).mean()) if len(lat) else float("nan"),
            "queue_drops": drops, "collisions": collisions}


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{n} nodes\n1/{iv} s" for n, iv in THEIRS]
    x = np.arange(len(labels))
    fig, ax = plt.subplots(figsize=(7, 3.6))
    ax.bar(x - 0.27, [THEIRS[k] for k in THEIRS], 0.27, label="DSME-LoRa Fig. 22")
    for k, plan in enumerate(PLANS):
        ratio = {(r["nodes"], r["interval_s"]): r["delivery_ratio"]
                 for r in rows if r["cap_plan"] == plan}
        ax.bar(x + k * 0.27, [ratio[key] for key in THEIRS], 0.27, label=f"ours, {plan}")
    ax.set_xticks(x, labels)
    ax.set_ylabel("CAP delivery ratio")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=8)
    ax.set_title(f"CAP delivery ({rows[0]['seeds']} seeds x {rows[0]['horizon_s']:.0f} s)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=SEEDS)
    ap.add_argument("--horizon", type=float, default=HORIZON_S)
    ap.add_argument("--out", type=Path, default=RESULTS / "dticn-fig22.json")
    args = ap.parse_args()
    rows = []
    print(f"{'nodes':>5} {'1/s':>4} {'plan':>9} {'ours':>6} {'theirs':>6} {'p50 s':>6} "
          f"{'p90 s':>6} {'<10s':>5} {'drops':>5} {'wall s':>6}")
    for nodes, interval in THEIRS:
        for plan in PLANS:
            wall = time.perf_counter()
            r = point(nodes, interval, plan, args.seeds, args.horizon)
            rows.append(r)
            print(f"{nodes:>5} {interval:>4} {plan:>9} {r['delivery_ratio']:>6.3f} "
                  f"{r['theirs_delivery_ratio']:>6.2f} {r['delay_p50_s']:>6.2f} "
                  f"{r['delay_p90_s']:>6.2f} {r['delay_share_under_10s']:>5.2f} "
                  f"{r['queue_drops']:>5} {time.perf_counter() - wall:>6.1f}", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"source": "DSME-LoRa, ACM TOSN 2022, Fig. 22",
                                    "rows": rows}, indent=1))
    plot(rows, args.out.with_suffix(".png"))
    print(f"wrote {args.out} and {args.out.with_suffix('.png')}")


if __name__ == "__main__":
    main()
