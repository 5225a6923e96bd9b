"""DT-ICN experiment world: simulated seconds per wall second, per configuration.

Each configuration runs one seed of the artifact topology for the same window; the table
shows the speed and each one's ratio to ``push-draft`` (the cheapest: one LoRa frame and
eight Internet packets per item), so polling's extra packets show up as extra cost here too.
Then the serial/parallel ratio of ``run_many`` on this machine's cores.

Run: ``python dticn/benchmarks/bench_schemes.py [--duration 3600]``.
"""

from __future__ import annotations

import argparse
import os
import time

from dticn.experiments.params import Experiment
from dticn.experiments.runner import run_many, run_one
from dticn.schemes import ALL_CONFIGS


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=3600.0, help="window per run (s)")
    args = parser.parse_args()
    speeds: dict[str, float] = {}
    for config in ALL_CONFIGS:
        exp = Experiment(config=config, duration_s=args.duration)
        wall = time.perf_counter()
        run_one(exp)
        speeds[config] = exp.horizon_s / (time.perf_counter() - wall)
    base = speeds["push-draft"]
    print(f"{'config':<15}{'sim s / wall s':>16}{'vs push-draft':>15}")
    for config, speed in speeds.items():
        print(f"{config:<15}{speed:>16.0f}{speed / base:>15.2f}")
    exps = [Experiment(config=c, duration_s=args.duration) for c in ALL_CONFIGS]
    timings = {}
    for workers in (1, os.cpu_count() or 1):
        wall = time.perf_counter()
        run_many(exps, workers=workers)
        timings[workers] = time.perf_counter() - wall
    serial = timings[1]
    for workers, wall in timings.items():
        print(f"run_many workers={workers}: {wall:.1f} s (speed-up {serial / wall:.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
