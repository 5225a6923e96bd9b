"""What sparsity costs in accuracy on a real task: Fashion-MNIST, fixed steps, one run.

For each final sparsity (default 0.5, 0.8, 0.9, 0.95) and each schedule (one-shot at step
0, and the gradual cubic schedule from step 0 to half the run), train ``fashion-cnn`` with
the exact compacted tier (``pactrain-fp32``: no compression error, so only pruning moves
the accuracy) for ``--steps`` steps, and the dense reference (``dense``, sparsity 0), then
evaluate on all 10,000 test images. Global batch 128 (``--workers`` x ``--batch-size``) on
loopback: accuracy per step does not depend on the link.

Writes ``--out``.json, ``--out``.md and ``--out``.png (final accuracy against sparsity, one
line per schedule, dense as a horizontal line). A benchmark, not a test.

    python pactrain/benchmarks/sparsity_accuracy.py --out out/fashion-sparsity
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress

from pactrain.bench.report import output_prefix
from pactrain.models import check_data
from pactrain.train.config import RunConfig
from pactrain.train.launch import run_training

#: (label, prune_start, prune_end) as fractions of the run.
SCHEDULES = (("one-shot", 0.0, 0.0), ("gradual", 0.0, 0.5))


def runs(args: argparse.Namespace) -> list[tuple[str, float, RunConfig]]:
    """The dense reference, then every (schedule, sparsity)."""
    base = dict(model=args.model, workers=args.workers, steps=args.steps,
                batch_size=args.batch_size, seed=args.seed, warmup_steps=0, probe_link=False)
    out = [("dense", 0.0, RunConfig(method="dense", sparsity=0.0, **base))]
    for label, start, end in SCHEDULES:
        for sparsity in args.sparsities:
            out.append((label, sparsity, RunConfig(method="pactrain-fp32", sparsity=sparsity,
                                                   prune_start=start, prune_end=end, **base)))
    return out


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    dense = next(r["accuracy"] for r in rows if r["schedule"] == "dense")
    ax.axhline(100 * dense, color="grey", linestyle="--", label="dense")
    for label, _, _ in SCHEDULES:
        pts = sorted((r["sparsity"], r["accuracy"]) for r in rows if r["schedule"] == label)
        ax.plot([p[0] for p in pts], [100 * p[1] for p in pts], marker="o", label=label)
    ax.set_xlabel("final sparsity of the pruned weights")
    ax.set_ylabel("test accuracy after the run (%)")
    ax.set_title(f"{rows[0]['model']}: accuracy against sparsity ({rows[0]['steps']} steps)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="fashion-cnn")
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--sparsities", type=float, nargs="+", default=[0.5, 0.8, 0.9, 0.95])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="pactrain-sparsity")
    args = parser.parse_args(argv)
    console = Console()
    try:
        check_data([args.model])
    except FileNotFoundError as err:
        console.print(f"error: {err}")
        return 2
    rows = []
    plan = runs(args)
    with Progress(console=console) as progress:
        task = progress.add_task("sparsity vs accuracy", total=len(plan))
        for label, sparsity, config in plan:
            progress.update(task, description=f"{label} {sparsity:.2f}")
            result = run_training(config, progress=False)
            rows.append({"model": args.model, "schedule": label, "sparsity": sparsity,
                         "steps": args.steps, "accuracy": result["final_test_accuracy"],
                         "test_loss": result["final_test_loss"],
                         "density": result["density"], "seed": args.seed})
            console.print(f"{label} {sparsity:.2f}: {100 * rows[-1]['accuracy']:.2f}%")
            progress.advance(task)
    out = output_prefix(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    Path(f"{out}.json").write_text(json.dumps({"rows": rows, "args": vars(args)},
                                                   indent=2))
    dense = rows[0]["accuracy"]
    lines = ["| schedule | sparsity | test accuracy | vs dense (pt) |", "|---|---|---|---|"]
    lines += [f"| {r['schedule']} | {r['sparsity']:.2f} | {100 * r['accuracy']:.2f}% | "
              f"{100 * (r['accuracy'] - dense):+.2f} |" for r in rows]
    Path(f"{out}.md").write_text("\n".join(lines) + "\n")
    plot(rows, Path(f"{out}.png"))
    console.print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
