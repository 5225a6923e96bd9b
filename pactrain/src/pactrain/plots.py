"""Figures of a bench document (matplotlib, Agg: no display needed).

Kept apart from the bench itself (no plotting inside measurement code): every figure is
drawn from the JSON that ``pactrain bench`` wrote, so it can be redrawn later.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from pactrain.bench.report import shown_method, summarize
from pactrain.rates import parse_rate


def _bandwidth_value(label: str) -> float | None:
    try:
        return parse_rate(label) / 1e6
    except ValueError:
        return None


def _throughput_panel(ax: Any, lines: list[dict[str, Any]], model: str) -> None:
    """Samples/s against bandwidth, one line per method."""
    series: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for line in lines:
        x = _bandwidth_value(line["bandwidth"])
        if line["model"] == model and line.get("samples_per_s") and x is not None:
            series[line["method"]].append((x, line["samples_per_s"]))
    ax.set_ylabel("samples/s")
    ax.grid(True, which="both", alpha=0.3)
    if not series:  # unthrottled (loopback): no bandwidth axis, one bar per method
        speeds = {line["method"]: line["samples_per_s"] for line in lines
                  if line["model"] == model and line.get("samples_per_s")}
        ax.bar(list(speeds), list(speeds.values()))
        ax.set_title(f"{model}: throughput (unthrottled)")
        return
    for method, points in series.items():
        points.sort()
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=method)
    ax.set_xscale("log")
    ax.set_xlabel("bandwidth per worker link (Mbit/s)")
    ax.set_title(f"{model}: throughput")


def _bytes_panel(ax: Any, lines: list[dict[str, Any]], model: str) -> None:
    """Payload and wire bytes per step per method (log scale) against the ideal, the
    density x dense fp32 gradient, at the first bandwidth measured for ``model``."""
    mine = [line for line in lines if line["model"] == model
            and line.get("payload_bytes_per_step") is not None]
    if not mine:
        return
    bandwidth = mine[0]["bandwidth"]
    mine = [line for line in mine if line["bandwidth"] == bandwidth
            and line["payload_bytes_per_step"] > 0]
    names = [line["method"] for line in mine]
    xs = range(len(names))
    ax.bar([x - 0.2 for x in xs], [line["payload_bytes_per_step"] / 1e6 for line in mine],
           width=0.4, label="payload (hook)")
    wire = [(line.get("wire_bytes_per_step") or 0) / 1e6 for line in mine]
    if any(wire):
        ax.bar([x + 0.2 for x in xs], wire, width=0.4, label="wire (eth0 tx)")
    ideal = next((line.get("ideal_bytes_per_step") for line in mine
                  if line.get("ideal_bytes_per_step")), None)
    if ideal:
        ax.axhline(ideal / 1e6, color="grey", linestyle="--", linewidth=1,
                   label="ideal fp32 (density x dense)")
    ax.set_xticks(list(xs), names, rotation=45, ha="right", fontsize="small")
    ax.set_yscale("log")
    ax.set_ylabel("MB per step per worker")
    ax.set_title(f"{model} at {bandwidth}: bytes per step")
    ax.grid(True, axis="y", which="both", alpha=0.3)


def _exposed_lines(lines: list[dict[str, Any]], model: str) -> list[dict[str, Any]]:
    """The model's lines with an exposed communication time: none when no compute floor
    ran (``--no-compute-floor``), and then the figure gives the panel no slot."""
    return [line for line in lines if line["model"] == model
            and line.get("exposed_comm_s_per_step") is not None and line["method"] != "no-comm"]


def _exposed_panel(ax: Any, mine: list[dict[str, Any]], model: str) -> None:
    """Exposed communication per step (step time above the no-comm compute floor), one
    bar group per method, one bar per bandwidth, from the model's :func:`_exposed_lines`."""
    methods = list(dict.fromkeys(line["method"] for line in mine))
    bandwidths = list(dict.fromkeys(line["bandwidth"] for line in mine))
    width = 0.8 / len(bandwidths)
    for i, bandwidth in enumerate(bandwidths):
        values = {line["method"]: line["exposed_comm_s_per_step"] for line in mine
                  if line["bandwidth"] == bandwidth}
        ax.bar([m + i * width - 0.4 + width / 2 for m in range(len(methods))],
               [max(values.get(name, 0.0), 1e-3) for name in methods], width=width,
               label=bandwidth)
    ax.set_xticks(range(len(methods)), methods, rotation=45, ha="right", fontsize="small")
    ax.set_yscale("log")
    ax.set_ylabel("s per step above the compute floor")
    ax.set_title(f"{model}: exposed communication")
    ax.grid(True, axis="y", which="both", alpha=0.3)


def _race_panel(ax: Any, curves: list[dict[str, Any]], target: float | None) -> None:
    """Test accuracy (or held-out loss) against training wall time, one line per method,
    for one (model, bandwidth) of the race."""
    loss = curves[0].get("metric", "test_accuracy") != "test_accuracy"
    scale = 1.0 if loss else 100.0
    target = curves[0].get("target", target)
    for curve in curves:
        pts = curve["points"]
        ax.plot([p[0] for p in pts], [scale * p[2] for p in pts], marker=".",
                label=shown_method(curve["method"], curve.get("sparsity")))
    if target:
        ax.axhline(scale * target, color="grey", linestyle="--", linewidth=1)
    what = "held-out loss" if loss else "accuracy"
    ax.set_title(f"{curves[0]['model']} at {curves[0]['bandwidth']}: {what} vs wall time")
    ax.set_ylabel("held-out loss per byte" if loss else "test accuracy (%)")


def plot_bench(document: dict[str, Any], path: str | Path) -> Path:
    """Per model: throughput against bandwidth per method, bytes per step against the
    ideal, exposed communication per method; then, if the time-to-accuracy race ran,
    accuracy against training wall time, one panel per (model, bandwidth). Without a race
    there is no accuracy panel: a throughput run's few steps say nothing about accuracy."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lines = summarize(document["rows"])
    models = list(dict.fromkeys(line["model"] for line in lines))
    races: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for curve in document.get("curves") or []:
        races.setdefault((curve["model"], curve["bandwidth"]), []).append(curve)
    # throughput and bytes per step, and exposed communication where a floor was run
    exposed = {model: _exposed_lines(lines, model) for model in models}
    first = sum(2 + bool(exposed[model]) for model in models)
    panels = max(1, first + len(races))
    cols = min(panels, 3)
    rows_n = -(-panels // cols)
    fig, axes = plt.subplots(rows_n, cols, figsize=(5 * cols, 4 * rows_n), squeeze=False)
    flat = list(axes.flat)
    at = 0
    for model in models:
        _throughput_panel(flat[at], lines, model)
        _bytes_panel(flat[at + 1], lines, model)
        at += 2
        if exposed[model]:
            _exposed_panel(flat[at], exposed[model], model)
            at += 1
    target = (document.get("environment", {}).get("config") or {}).get("time_to_accuracy")
    target = target or next((c.get("target") for c in document.get("curves") or []
                             if c.get("target")), None)
    accuracy_axes = flat[first:first + len(races)]
    for ax, group in zip(accuracy_axes, races.values(), strict=True):
        _race_panel(ax, group, target)
    for ax in accuracy_axes:
        ax.set_xlabel("training wall time (s)")
        ax.grid(True, alpha=0.3)
    for ax in flat[:first + len(accuracy_axes)]:
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize="small")
    for ax in flat[first + len(accuracy_axes):]:
        ax.set_visible(False)
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out
