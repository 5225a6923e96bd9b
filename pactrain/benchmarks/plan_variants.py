"""What one of the adaptive policy's choices cost in learning per step: record the
decisions of ``attach`` with no flags under a shaped link, then replay them on loopback
as recorded and with one bucket's tier changed.

A replayed plan takes the same tiers and the same operating point at the same steps and
measures nothing (:class:`pactrain.plan.ReplayPolicy`), so on loopback it repeats the
shaped run's learning bit for bit; a variant differs from it in the one choice edited.
Printed and written: each variant's held-out metric every ``--eval-every`` steps and its
tiers per bucket.

    sudo .venv/bin/python pactrain/benchmarks/plan_variants.py --model fashion-cnn \\
        --seed 2 --stop-after 200 --force-tier packed \\
        --out pactrain/benchmarks/results/adaptive/plan-variants-seed2
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rich.console import Console

from pactrain.bench.network import bench_network
from pactrain.bench.report import output_prefix
from pactrain.models import check_data
from pactrain.train.config import RunConfig
from pactrain.train.launch import run_training


def forced(plan: list[dict[str, Any]], tier: str, bucket: int | None) -> list[dict[str, Any]]:
    """``plan`` with every tier decision (of ``bucket``, or of all) set to ``tier``."""
    return [{**entry, "tier": tier}
            if "tier" in entry and bucket in (None, entry["bucket"]) else entry
            for entry in plan]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="fashion-cnn")
    parser.add_argument("--bandwidth", default="10mbit")
    parser.add_argument("--steps", type=int, default=800, help="The schedule's length.")
    parser.add_argument("--stop-after", type=int, default=200)
    parser.add_argument("--eval-every", type=int, default=50)
    parser.add_argument("--sparsity", type=float, default=0.9)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--force-tier", default="packed")
    parser.add_argument("--bucket", type=int, default=None,
                        help="Only this bucket's decisions (default: every bucket's).")
    parser.add_argument("--out", default="plan-variants")
    args = parser.parse_args(argv)
    check_data([args.model], None)
    console = Console()
    common = dict(model=args.model, workers=4, steps=args.steps, stop_after=args.stop_after,
                  batch_size=args.batch_size, seed=args.seed, sparsity=args.sparsity,
                  warmup_steps=0, eval_every=args.eval_every)
    with bench_network(4, True) as network:
        if not network.throttled:
            console.print(f"[bold red]UNTHROTTLED[/]: {network.reason}")
        network.shape(args.bandwidth)
        recorded = run_training(RunConfig(method="pactrain", **common),
                                command_prefix_for_rank=network.prefix,
                                master_addr=network.master_addr, progress=False)
    plan = recorded["plan"]
    variants = {"recorded": recorded,
                "replayed": run_training(RunConfig(method="pactrain", plan=plan, **common),
                                         progress=False),
                f"forced-{args.force_tier}": run_training(RunConfig(
                    method="pactrain", plan=forced(plan, args.force_tier, args.bucket),
                    **common), progress=False)}
    rows = [{"variant": name, "curve": [[p[1], p[2]] for p in result["eval_curve"]],
             "tiers": result["tier_counts_per_bucket"]} for name, result in variants.items()]
    for row in rows:
        shown = ", ".join(f"{step}: {metric:.4f}" for step, metric in row["curve"])
        console.print(f"{row['variant']}: {shown}  tiers {row['tiers']}")
    output_prefix(args.out).with_suffix(".json").write_text(json.dumps(
        {"args": vars(args), "plan": plan, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
