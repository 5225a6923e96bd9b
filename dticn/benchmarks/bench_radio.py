"""LoRa/DSME edge simulator: simulated seconds per wall second and events per second.

For 10, 100 and 1000 nodes (one item per node every 10 minutes, SF7, GTS uplink):

* ``batch``: the batched engine (GTS frames in closed form per node with numpy, upkeep in
  closed form); it has no kernel events, so it reports frames per second.
* ``events/closed``: every frame as events on the EventKernel, upkeep in closed form.
* ``events/events``: every beacon, every slot wake-up and every frame as events (the
  reference the closed form is checked against).

Then the target run: one simulated year of 100 nodes (5.26 million items) with the
engine ``dticn radio`` picks for it. The horizons of the slower engines are short and
scaled to the node count; the ratios are what to compare (this machine is shared).

Run: ``python dticn/benchmarks/bench_radio.py [--json out.json] [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import time

from dticn.radio.batch import run_batch
from dticn.radio.context import smallest_mo_that_fits
from dticn.radio.engines import run
from dticn.radio.network import RadioNetwork
from dticn.radio.scenario import Scenario

DAY = 86400.0


def _scenario(nodes: int, horizon_s: float) -> Scenario:
    s = Scenario(nodes=nodes, duration_s=horizon_s, traffic="periodic:600s", rx_chains=8)
    mo = smallest_mo_that_fits(s)
    return s.with_(mo=mo, bo=mo)


def measure(nodes: int, engine: str, horizon_s: float) -> dict[str, float | int | str]:
    s = _scenario(nodes, horizon_s)
    if engine == "batch":   # includes building the scenario (placement, schedule)
        wall, cpu = time.perf_counter(), time.process_time()
        result = run_batch(s)
    else:                   # the network is built before the clock starts
        network = RadioNetwork(s.with_(upkeep=engine.split("/")[1], engine="events"))
        wall, cpu = time.perf_counter(), time.process_time()
        result = network.run()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {
        "nodes": nodes, "engine": engine, "mo": s.mo, "sim_s": horizon_s, "wall_s": wall,
        "cpu_s": cpu, "sim_s_per_wall_s": horizon_s / wall,
        "sim_s_per_cpu_s": horizon_s / cpu, "events": result.events,
        "events_per_s": result.events / wall, "events_per_cpu_s": result.events / cpu,
        "frames": result.frames, "frames_per_s": result.frames / wall,
        "frames_per_cpu_s": result.frames / cpu,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the rows to this file")
    parser.add_argument("--quick", action="store_true", help="shorter horizons")
    args = parser.parse_args()
    scale = 0.1 if args.quick else 1.0
    horizons = {  # simulated seconds per engine and node count
        "batch": {10: 365 * DAY, 100: 365 * DAY, 1000: 30 * DAY},
        "events/closed": {10: 7 * DAY, 100: 1 * DAY, 1000: 0.1 * DAY},
        "events/events": {10: 1 * DAY, 100: 0.25 * DAY, 1000: 0.025 * DAY},
    }
    rows = []
    header = (f"{'nodes':>6} {'engine':>14} {'MO':>3} {'sim s':>11} {'wall s':>8} "
              f"{'sim-s/wall-s':>13} {'events/s':>10} {'frames/s':>11} {'cpu s':>7} "
              f"{'sim-s/cpu-s':>12} {'events/cpu-s':>13}")
    print(header)
    for nodes in (10, 100, 1000):
        for engine, per_n in horizons.items():
            row = measure(nodes, engine, per_n[nodes] * scale)
            rows.append(row)
            print(f"{nodes:>6} {engine:>14} {row['mo']:>3} {row['sim_s']:>11.0f} "
                  f"{row['wall_s']:>8.2f} {row['sim_s_per_wall_s']:>13.3g} "
                  f"{row['events_per_s']:>10.3g} {row['frames_per_s']:>11.3g} "
                  f"{row['cpu_s']:>7.2f} {row['sim_s_per_cpu_s']:>12.3g} "
                  f"{row['events_per_cpu_s']:>13.3g}", flush=True)
    target = Scenario(nodes=100, duration_s=365 * DAY, traffic="periodic:600s")
    target = target.with_(mo=smallest_mo_that_fits(target), bo=smallest_mo_that_fits(target))
    wall, cpu = time.perf_counter(), time.process_time()
    result = run(target)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    summary = result.summary()
    print(f"target: 100 nodes x 365 d x periodic:600s = {summary['generated']} items, "
          f"engine {result.engine}, MO={target.mo}: {wall:.2f} s wall, {cpu:.2f} s CPU "
          f"(goal < 60 s); delivery ratio {summary['delivery_ratio']:.6f}")
    rows.append({"target": True, "items": summary["generated"], "wall_s": wall,
                 "engine": result.engine})
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
