"""Every method side by side on real throttled links: the issue's target, measured in one run.

Presets (``--preset``):

- ``target`` (default): resnet18, 4 workers, 100 Mbit/s, batch 8 per worker, sparsity 0.8,
  all methods, ``--repeats`` passes with the method order rotated; then digits-cnn at the
  same settings for accuracy. Prints the table and the target ratios:
  PacTrain >= 3x dense, >= 1.25x the best of fp16/top-k/DGC/TernGrad, >= 1.25x PowerSGD
  (rank 4), and digits-cnn accuracy within 1 point of dense.
- ``grid``: the issue's full grid (digits-cnn, resnet18, vit-tiny, gpt-tiny at 10 Mbit/s,
  100 Mbit/s and 1 Gbit/s). Long: dense resnet18 at 10 Mbit/s takes about a minute a step.
- ``quick``: resnet18, dense/powersgd/pactrain, 2 workers, 100 Mbit/s, 6 steps: about
  1.5 minutes (what ``pactrain demo`` could run).

Writes ``--out``.json, ``--out``.png and ``--out``.md (the Markdown table). Run as root
for throttled links; without root everything runs on loopback and says so.
This is a benchmark, not a test: the machine is shared and noisy, so only the ratios
inside one run mean something.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from pactrain.bench.config import BenchConfig
from pactrain.bench.report import markdown_table, rich_table, summarize, write_json
from pactrain.bench.runner import run_bench
from pactrain.plots import plot_bench

ALL_METHODS = ["dense", "fp16", "powersgd", "topk", "dgc", "terngrad", "pactrain"]
CHEAP_BASELINES = ("fp16", "topk", "dgc", "terngrad")


def presets(repeats: int) -> dict[str, list[BenchConfig]]:
    return {
        "target": [
            BenchConfig(models=["resnet18"], methods=ALL_METHODS, bandwidths=["100mbit"],
                        workers=4, batch_size=8, steps=14, warmup_steps=4, sparsity=0.8,
                        repeats=repeats, powersgd_rank=4),
            BenchConfig(models=["digits-cnn"], methods=ALL_METHODS, bandwidths=["100mbit"],
                        workers=4, batch_size=8, steps=200, warmup_steps=5, sparsity=0.8),
        ],
        "grid": [
            BenchConfig(models=["digits-cnn", "resnet18", "vit-tiny", "gpt-tiny"],
                        methods=ALL_METHODS, bandwidths=["10mbit", "100mbit", "1gbit"],
                        workers=4, batch_size=8, steps=30, sparsity=0.8, repeats=repeats),
        ],
        "quick": [
            BenchConfig(models=["resnet18"], methods=["dense", "powersgd", "pactrain"],
                        bandwidths=["100mbit"], workers=2, batch_size=8, steps=6,
                        warmup_steps=2, sparsity=0.8),
        ],
    }


def target_report(rows: list[dict[str, Any]]) -> list[str]:
    """The issue's four targets, each as measured / required."""
    lines = {(r["model"], r["method"]): r for r in summarize(rows)}

    def speed(method: str) -> float | None:
        line = lines.get(("resnet18", method))
        return line["samples_per_s"] if line else None

    out = []
    pac = speed("pactrain")
    if pac is None:
        return ["resnet18/pactrain was not measured"]
    checks = [("dense", 3.0, speed("dense"))]
    cheap = {m: speed(m) for m in CHEAP_BASELINES if speed(m)}
    if cheap:
        best = max(cheap, key=lambda m: cheap[m] or 0.0)
        checks.append((f"best of fp16/topk/dgc/terngrad ({best})", 1.25, cheap[best]))
    checks.append(("powersgd", 1.25, speed("powersgd")))
    for name, need, other in checks:
        if other:
            ratio = pac / other
            verdict = "met" if ratio >= need else f"short by {100 * (1 - ratio / need):.0f}%"
            out.append(f"pactrain / {name}: {ratio:.2f}x (target >= {need}x): {verdict}")
    dense_acc = lines.get(("digits-cnn", "dense"), {}).get("accuracy")
    pac_acc = lines.get(("digits-cnn", "pactrain"), {}).get("accuracy")
    if dense_acc is not None and pac_acc is not None:
        gap = 100 * (dense_acc - pac_acc)
        out.append(f"digits-cnn accuracy: pactrain {100 * pac_acc:.1f}% vs dense "
                   f"{100 * dense_acc:.1f}% (gap {gap:+.1f} points, target <= 1): "
                   f"{'met' if gap <= 1.0 else 'missed'}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", choices=["target", "grid", "quick"], default="target")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", default="pactrain-bench")
    args = parser.parse_args(argv)
    console = Console(width=150)
    rows: list[dict[str, Any]] = []
    environment: dict[str, Any] = {}
    out = Path(args.out)
    for config in presets(args.repeats)[args.preset]:
        done = list(rows)

        def save_partial(new: list[dict[str, Any]], done: list = done) -> None:
            write_json(out.with_suffix(".json"), done + new, {"partial": True})

        document = run_bench(config, console=console, on_row=save_partial)
        rows += document["rows"]
        environment = document["environment"]
    environment["preset"] = args.preset
    console.print(rich_table(rows, title=f"pactrain bench ({args.preset})"))
    for line in target_report(rows):
        console.print(line)
    document = write_json(out.with_suffix(".json"), rows, environment)
    plot_bench(document, out.with_suffix(".png"))
    out.with_suffix(".md").write_text(markdown_table(rows) + "\n\n" +
                                      "\n".join(f"- {t}" for t in target_report(rows)) + "\n")
    console.print(f"wrote {out}.json, {out}.png, {out}.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
