"""Figures of a bench document (matplotlib, Agg: no display needed).

Kept apart from the bench itself (no plotting inside measurement code): every figure is
drawn from the JSON that ``pactrain bench`` wrote, so it can be redrawn later.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from pactrain.bench.report import summarize
from pactrain.netns import parse_rate


def _bandwidth_value(label: str) -> float | None:
    try:
        return parse_rate(label) / 1e6
    except ValueError:
        return None


def plot_bench(document: dict[str, Any], path: str | Path) -> Path:
    """Throughput against bandwidth per method (one panel per model), and accuracy against
    training wall time (time-to-accuracy curves if present, else one point per run)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lines = summarize(document["rows"])
    models = list(dict.fromkeys(line["model"] for line in lines))
    fig, axes = plt.subplots(1, len(models) + 1, figsize=(5 * (len(models) + 1), 4),
                             squeeze=False)
    for ax, model in zip(axes[0], models, strict=False):
        series: dict[str, list[tuple[float, float]]] = defaultdict(list)
        for line in lines:
            x = _bandwidth_value(line["bandwidth"])
            if line["model"] == model and line.get("samples_per_s") and x is not None:
                series[line["method"]].append((x, line["samples_per_s"]))
        for method, points in series.items():
            points.sort()
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=method)
        ax.set_xscale("log")
        ax.set_xlabel("bandwidth per worker link (Mbit/s)")
        ax.set_ylabel("samples/s")
        ax.set_title(f"{model}: throughput")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
    ax = axes[0][-1]
    curves = document.get("curves") or []
    if curves:
        for curve in curves:
            pts = curve["points"]
            ax.plot([p[0] for p in pts], [100 * p[2] for p in pts], marker=".",
                    label=curve["method"])
        target = document["environment"]["config"].get("time_to_accuracy")
        if target:
            ax.axhline(100 * target, color="grey", linestyle="--", linewidth=1)
        ax.set_title(f"digits-cnn: accuracy vs wall time ({curves[0]['bandwidth']})")
    else:
        for row in document["rows"]:
            if row.get("accuracy") is not None and row.get("elapsed_s"):
                ax.scatter(row["elapsed_s"], 100 * row["accuracy"],
                           label=f"{row['method']} {row['bandwidth']}")
        ax.set_title("accuracy vs training wall time (one point per run)")
    ax.set_xlabel("training wall time (s)")
    ax.set_ylabel("test accuracy (%)")
    ax.grid(True, alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="small")
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out
