"""Where PacTrain pays, projected: `pactrain estimate`'s cost model over 8-256 workers at
1, 10 and 100 Gbit/s (issue 50), for ResNet-50 and GPT-2 small at published GPU step
times (:mod:`pactrain.estimate.reference_jobs`) and the repository's models at the compute
this host measured.

Link latency: a collective of N workers pays 2(N-1) ring steps of ``--hop-us`` each,
6 us by default: NCCL's per-hop latency for its Simple protocol, the one that carries
large messages (Hu et al., "Demystifying NCCL: An In-depth Analysis of GPU Communication
Protocols and Algorithms", arXiv:2507.04786, 2025); a network's own latency comes on top,
so give yours where it is known. Local work: none for the GPU jobs (the hooks'
work is taken as hidden on the accelerator, an optimistic assumption for top-k, whose
selection is not free on a GPU either); for the repository's models, measured on one
thread here. Writes ``--out``.json, .md (one table per job) and .png (PacTrain's step
over the best peer's, per job).

    .venv/bin/python pactrain/benchmarks/estimate_projection.py \\
        --out pactrain/benchmarks/results/estimate/projection
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from pactrain.bench.report import output_prefix
from pactrain.costs import ComputeCosts, LinkModel
from pactrain.estimate import Context, LocalCosts, Options, estimate, job_of_model
from pactrain.estimate.calibrate import measure_compute_s, measure_local_costs
from pactrain.estimate.reference_jobs import REFERENCE_JOBS
from pactrain.estimate.step import is_pactrain
from pactrain.rates import parse_rate

METHODS = ("dense", "fp16", "powersgd", "topk", "dgc", "pactrain")
NO_LOCAL = LocalCosts(ComputeCosts(0.0, 0.0, 0.0, 0.0, 0.0), 0.0, 0.0, 0.0)


def project(job: Any, costs: LocalCosts, hop_s: float, workers: list[int],
            bandwidths: list[str], options: Options) -> list[dict[str, Any]]:
    rows = []
    for count in workers:
        for bandwidth in bandwidths:
            link = LinkModel(2 * (count - 1) * hop_s, 8.0 / parse_rate(bandwidth))
            estimates = estimate(job, Context(link, costs, count, options), METHODS)
            steps = {e.method: e.step_s for e in estimates}
            peer = min((e for e in estimates if not is_pactrain(e.method)),
                       key=lambda e: e.step_s)
            rows.append({"job": job.name, "workers": count, "bandwidth": bandwidth,
                         "compute_s": job.compute_s, "steps": steps,
                         "winner": min(steps, key=steps.__getitem__),
                         "best_peer": peer.method,
                         "pactrain_over_best_peer": steps["pactrain"] / peer.step_s})
    return rows


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    jobs = list(dict.fromkeys(r["job"] for r in rows))
    fig, axes = plt.subplots(1, len(jobs), figsize=(3.2 * len(jobs), 3.4), squeeze=False)
    for ax, name in zip(axes[0], jobs, strict=True):
        mine = [r for r in rows if r["job"] == name]
        workers = sorted({r["workers"] for r in mine})
        bandwidths = list(dict.fromkeys(r["bandwidth"] for r in mine))
        grid = [[next(r["pactrain_over_best_peer"] for r in mine
                      if r["workers"] == w and r["bandwidth"] == b) for b in bandwidths]
                for w in workers]
        image = ax.imshow(grid, cmap="RdYlGn_r", vmin=0.5, vmax=1.5, aspect="auto")
        for i, line in enumerate(grid):
            for j, value in enumerate(line):
                ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=8)
        ax.set(xticks=range(len(bandwidths)), xticklabels=bandwidths,
               yticks=range(len(workers)), yticklabels=workers, title=name,
               xlabel="link per worker", ylabel="workers")
    fig.colorbar(image, ax=axes[0].tolist(), shrink=0.8,
                 label="PacTrain step / best peer's (< 1: PacTrain pays)")
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["fashion-cnn", "lm-gpt", "resnet18"],
                        help="Repository models, at this host's compute.")
    parser.add_argument("--compute", nargs="+", default=[], metavar="MODEL=SECONDS",
                        help="A repository model's compute per step, instead of measuring "
                        "it (e.g. fashion-cnn=0.0288 from estimate_check's calibration).")
    parser.add_argument("--workers", nargs="+", type=int, default=[8, 32, 128, 256])
    parser.add_argument("--bandwidths", nargs="+", default=["1gbit", "10gbit", "100gbit"])
    parser.add_argument("--sparsity", type=float, default=0.9)
    parser.add_argument("--hop-us", type=float, default=6.0)
    parser.add_argument("--out", default="estimate-projection")
    args = parser.parse_args(argv)
    console = Console()
    options = Options(sparsity=args.sparsity)
    hop_s = args.hop_us * 1e-6
    rows: list[dict[str, Any]] = []
    for make in REFERENCE_JOBS.values():
        rows += project(make(), NO_LOCAL, hop_s, args.workers, args.bandwidths, options)
    if args.models:
        costs = measure_local_costs(1)
        given = dict(item.split("=", 1) for item in args.compute)
        for name in args.models:
            compute_s = (float(given[name]) if name in given else
                         measure_compute_s(name, 2, None, args.sparsity))
            rows += project(job_of_model(name, compute_s), costs, hop_s, args.workers,
                            args.bandwidths, options)
    lines = []
    for name in dict.fromkeys(r["job"] for r in rows):
        mine = [r for r in rows if r["job"] == name]
        table = Table(title=f"{name}: predicted s/step (compute {mine[0]['compute_s']:.3f} s)")
        header = ["workers", "link", *METHODS, "winner", "PacTrain / best peer"]
        for column in header:
            table.add_column(column)
        lines += [f"#### {name} (compute {mine[0]['compute_s']:.4f} s a step)", "",
                  "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for r in mine:
            cells = [str(r["workers"]), r["bandwidth"],
                     *(f"{r['steps'][m]:.3f}" for m in METHODS), r["winner"],
                     f"{r['pactrain_over_best_peer']:.2f} ({r['best_peer']})"]
            table.add_row(*cells)
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        console.print(table)
    prefix = output_prefix(args.out)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    Path(f"{prefix}.json").write_text(json.dumps(
        {"args": vars(args), "hop_s": hop_s, "rows": rows}, indent=2))
    Path(f"{prefix}.md").write_text("\n".join(lines))
    plot(rows, Path(f"{prefix}.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
