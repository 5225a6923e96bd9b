"""FSDP2's traffic with and without PacTrain's compaction, counted and read off the wire
(issue 50's FSDP targets: reduce-scatter and all-gather bytes each <= 0.25x FSDP2's own at
80% sparsity on the fp32 tier; total <= 0.2x with the cheapest tier that holds the loss).

Two measurements, printed side by side:

1. **Traffic** (``pactrain bench``'s runner: each worker in its own network namespace behind
   a ``tc tbf`` link, pruned at step 0 so every timed step runs on the final masks): per
   worker count and tier (FSDP2's fp32, and its bf16 ``MixedPrecisionPolicy``), FSDP2's own
   collectives (method ``dense``, same pruning) against ``pactrain``: bytes per step of each
   collective as counted, rank 0's transmitted bytes per step on its interface, and the step
   time on the shaped link.
2. **Loss at equal steps** (loopback, the gradual schedule): the final held-out loss of
   ``pactrain`` on each tier, so "holds the loss" is measured, not assumed. Only
   ``pactrain`` runs here: on the same tier it is bit-equal to FSDP2's own collectives
   (``tests/fsdp``), so FSDP2's loss is the same number.

Run it alone on the machine, as root:

    sudo .venv/bin/python pactrain/benchmarks/fsdp_traffic.py \\
        --out pactrain/benchmarks/results/fsdp/traffic
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
from pactrain.train.config import RunConfig
from pactrain.train.launch import run_training

COLLECTIVES = ("reduce_scatter", "all_gather")


def traffic(args: argparse.Namespace, console: Console) -> list[dict[str, Any]]:
    """Measurement 1: one bench grid per worker count and tier."""
    rows = []
    for workers in args.workers:
        for dtype in args.dtypes:
            config = BenchConfig(models=[args.model], methods=["dense", "pactrain"],
                                 bandwidths=[args.bandwidth], workers=workers,
                                 steps=args.steps, warmup_steps=args.warmup_steps,
                                 sparsity=args.sparsity, optimizer="adamw",
                                 compute_floor=False, fsdp=True,
                                 fsdp_dtype=None if dtype == "fp32" else dtype)
            for row in run_bench(config, console=console)["rows"]:
                rows.append({"workers": workers, "dtype": dtype, "method": row["method"],
                             "by_collective": row.get("payload_by_collective_per_step", {}),
                             "control_bytes_per_step": row.get("control_bytes_per_step"),
                             "wire_bytes_per_step": row.get("wire_bytes_per_step"),
                             "samples_per_s": row.get("samples_per_s"),
                             "step_s": (row["batch_size"] * workers / row["samples_per_s"]
                                        if row.get("samples_per_s") else None),
                             "error": row.get("error")})
    return rows


def quality(args: argparse.Namespace, console: Console) -> list[dict[str, Any]]:
    """Measurement 2: the final held-out loss of each tier at equal steps, per seed."""
    rows = []
    for dtype in args.dtypes:
        for method in ("pactrain",):
            for seed in args.seeds:
                console.print(f"equal steps: {method} {dtype} seed {seed}")
                result = run_training(RunConfig(
                    model=args.model, method=method, workers=2, steps=args.quality_steps,
                    sparsity=args.sparsity, seed=seed, optimizer="adamw", fsdp=True,
                    fsdp_dtype=None if dtype == "fp32" else dtype, probe_link=False),
                    progress=False)
                rows.append({"dtype": dtype, "method": method, "seed": seed,
                             "test_loss": result.get("final_test_loss"),
                             "density": result.get("density")})
    return rows


def summarize(traffic_rows: list[dict[str, Any]], quality_rows: list[dict[str, Any]]
              ) -> dict[str, Any]:
    """Ratios against FSDP2's own fp32 collectives on the same worker count."""
    reference = {r["workers"]: r for r in traffic_rows
                 if r["method"] == "dense" and r["dtype"] == "fp32" and not r["error"]}
    ratios = []
    for row in traffic_rows:
        base = reference.get(row["workers"])
        if base is None or row["error"]:
            continue
        entry = {"workers": row["workers"], "dtype": row["dtype"], "method": row["method"]}
        for collective in COLLECTIVES:
            ours, theirs = (r["by_collective"].get(collective, 0.0) for r in (row, base))
            entry[collective] = ours / theirs if theirs else None
        ours_total = sum(row["by_collective"].values()) + (row["control_bytes_per_step"] or 0)
        entry["total"] = ours_total / sum(base["by_collective"].values())
        if row["wire_bytes_per_step"] and base["wire_bytes_per_step"]:
            entry["wire"] = row["wire_bytes_per_step"] / base["wire_bytes_per_step"]
        entry["speedup"] = (row["samples_per_s"] / base["samples_per_s"]
                            if row["samples_per_s"] and base["samples_per_s"] else None)
        ratios.append(entry)
    losses: dict[tuple[str, str], list[float]] = {}
    for row in quality_rows:
        if row["test_loss"] is not None:
            losses.setdefault((row["dtype"], row["method"]), []).append(row["test_loss"])
    medians = {f"{dtype}/{method}": statistics.median(values)
               for (dtype, method), values in losses.items()}
    return {"ratios": ratios, "median_test_loss": medians}


def report(summary: dict[str, Any], args: argparse.Namespace, console: Console,
           prefix: Path) -> None:
    table = Table(title=f"FSDP2 traffic, {args.model}, sparsity {args.sparsity}, "
                  f"{args.bandwidth}: ratio to FSDP2's own fp32 collectives")
    for column in ("workers", "tier", "method", "reduce-scatter", "all-gather",
                   "total (counted)", "wire (rank 0 tx)", "samples/s vs FSDP2"):
        table.add_column(column, justify="right")
    lines = ["| workers | tier | method | reduce-scatter | all-gather | total (counted) | "
             "wire (rank 0 tx) | samples/s vs FSDP2 fp32 |", "|---|---|---|---|---|---|---|---|"]

    def cell(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    for r in summary["ratios"]:
        values = [str(r["workers"]), r["dtype"], r["method"], cell(r["reduce_scatter"]),
                  cell(r["all_gather"]), cell(r["total"]), cell(r.get("wire")),
                  cell(r["speedup"])]
        table.add_row(*values)
        lines.append("| " + " | ".join(values) + " |")
    console.print(table)
    lines += ["", "| tier / method | median held-out loss |", "|---|---|"]
    for key, value in sorted(summary["median_test_loss"].items()):
        console.print(f"median held-out loss {key}: {value:.4f}")
        lines.append(f"| {key} | {value:.4f} |")
    Path(f"{prefix}.md").write_text("\n".join(lines) + "\n")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="gpt-tiny")
    parser.add_argument("--workers", nargs="+", type=int, default=[2, 4])
    parser.add_argument("--dtypes", nargs="+", default=["fp32", "bf16"],
                        choices=["fp32", "bf16", "fp16"])
    parser.add_argument("--bandwidth", default="100mbit")
    parser.add_argument("--sparsity", type=float, default=0.8)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--warmup-steps", type=int, default=4)
    parser.add_argument("--quality-steps", type=int, default=120,
                        help="bf16 trains about 3x slower than fp32 on this CPU")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    parser.add_argument("--out", default="fsdp-traffic")
    args = parser.parse_args(argv)
    console = Console()
    prefix = output_prefix(args.out)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    traffic_rows = traffic(args, console)
    quality_rows = quality(args, console) if args.quality_steps else []
    summary = summarize(traffic_rows, quality_rows)
    Path(f"{prefix}.json").write_text(json.dumps(
        {"args": vars(args), "traffic": traffic_rows, "quality": quality_rows,
         "summary": summary}, indent=2))
    report(summary, args, console, prefix)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
