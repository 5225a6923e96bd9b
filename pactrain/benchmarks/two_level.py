"""Two nodes of two workers, a slow link between the nodes: hierarchical PacTrain against
flat PacTrain, PowerSGD at each rank and dense, side by side (issue 50's target: >= 1.5x
flat PacTrain's samples/s and >= 1.0x PowerSGD's best rank on fashion-resnet18).

Each worker runs in its own network namespace; the workers of a node share an unshaped
bridge (the fast bus) and one uplink shaped by ``tc tbf`` both ways (``pactrain bench
--nodes 2``). Every entrant runs the same steps on the same topology, pruned at step 0 so
every timed step is in the steady state; the grid repeats with the entrants' order rotated,
and the medians are compared. Run it alone on the machine, as root:

    sudo .venv/bin/python pactrain/benchmarks/two_level.py \\
        --out pactrain/benchmarks/results/two_level/fashion-resnet18-10mbit
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from pactrain.bench.config import BenchConfig
from pactrain.bench.report import output_prefix
from pactrain.bench.runner import run_bench


def entrants(args: argparse.Namespace) -> list[tuple[str, str, int]]:
    """(label, method, PowerSGD rank) of every entrant."""
    listed = [(f"powersgd-r{rank}", "powersgd", rank) for rank in args.powersgd_ranks]
    return [(method, method, 4) for method in args.methods] + listed


def measure(args: argparse.Namespace, console: Console) -> list[dict[str, Any]]:
    rows = []
    for repeat in range(args.repeats):
        order = entrants(args)
        shift = repeat % len(order)
        for label, method, rank in order[shift:] + order[:shift]:
            config = BenchConfig(models=[args.model], methods=[method],
                                 bandwidths=[args.bandwidth], workers=args.workers,
                                 nodes=args.nodes, steps=args.steps,
                                 warmup_steps=args.warmup_steps, sparsity=args.sparsity,
                                 batch_size=args.batch_size, powersgd_rank=rank,
                                 compute_floor=False, seed=repeat)
            for row in run_bench(config, console=console)["rows"]:
                rows.append({"entrant": label, "repeat": repeat,
                             "samples_per_s": row.get("samples_per_s"),
                             "wire_bytes_per_step": row.get("wire_bytes_per_step"),
                             "payload_bytes_per_step": row.get("payload_bytes_per_step"),
                             "tier_counts": row.get("tier_counts"), "error": row.get("error")})
    return rows


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    by_entrant: dict[str, list[float]] = {}
    for row in rows:
        if row["samples_per_s"] and not row["error"]:
            by_entrant.setdefault(row["entrant"], []).append(row["samples_per_s"])
    medians = {name: statistics.median(values) for name, values in by_entrant.items()}
    hier = medians.get("pactrain-hier")
    powersgd = {k: v for k, v in medians.items() if k.startswith("powersgd")}
    best = max(powersgd, key=lambda k: powersgd[k]) if powersgd else None

    def ratio(ours: str, theirs: str) -> float | None:
        return (medians[ours] / medians[theirs]
                if medians.get(ours) and medians.get(theirs) else None)

    return {"median_samples_per_s": medians,
            "hier_vs_flat": ratio("pactrain-hier", "pactrain"),
            "hier_fp32_vs_flat_fp32": ratio("pactrain-hier-fp32", "pactrain-fp32"),
            "best_powersgd": best,
            "hier_vs_best_powersgd": hier / powersgd[best] if hier and best else None}


def report(summary: dict[str, Any], args: argparse.Namespace, console: Console,
           prefix: Path) -> None:
    table = Table(title=f"{args.model}, {args.nodes} nodes x {args.workers // args.nodes} "
                  f"workers, {args.bandwidth} between nodes ({args.repeats} repeats, median)")
    table.add_column("entrant")
    table.add_column("samples/s", justify="right")
    table.add_column("vs pactrain-hier", justify="right")
    lines = ["| entrant | samples/s (median) | pactrain-hier / entrant |", "|---|---|---|"]
    medians = summary["median_samples_per_s"]
    hier = medians.get("pactrain-hier")
    for name, value in sorted(medians.items(), key=lambda item: -item[1]):
        ratio = f"{hier / value:.2f}x" if hier else "-"
        table.add_row(name, f"{value:.2f}", ratio)
        lines.append(f"| {name} | {value:.2f} | {ratio} |")
    console.print(table)
    for key in ("hier_vs_flat", "hier_fp32_vs_flat_fp32", "hier_vs_best_powersgd"):
        if summary[key] is not None:
            console.print(f"{key}: {summary[key]:.2f}x")
            lines.append(f"\n{key}: {summary[key]:.2f}x")
    Path(f"{prefix}.md").write_text("\n".join(lines) + "\n")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="fashion-resnet18")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--bandwidth", default="10mbit")
    parser.add_argument("--methods", nargs="+", default=["pactrain-hier", "pactrain",
                                                         "pactrain-hier-fp32", "pactrain-fp32"])
    parser.add_argument("--powersgd-ranks", nargs="*", type=int, default=[1, 2, 4])
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--sparsity", type=float, default=0.8)
    parser.add_argument("--steps", type=int, default=14)
    parser.add_argument("--warmup-steps", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", default="two-level")
    args = parser.parse_args(argv)
    console = Console()
    prefix = output_prefix(args.out)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    rows = measure(args, console)
    summary = summarize(rows)
    Path(f"{prefix}.json").write_text(json.dumps(
        {"args": vars(args), "rows": rows, "summary": summary}, indent=2))
    report(summary, args, console, prefix)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
