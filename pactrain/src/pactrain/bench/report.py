"""Derived columns, the side-by-side table and the JSON file of a bench run.

JSON: ``{"rows": [...], "environment": {...}, "curves": [...]}``. Each row is one run;
:data:`REQUIRED_ROW_FIELDS` are always present (``None`` where not measured):

- ``model``, ``method``, ``bandwidth`` (tc rate, or ``loopback``), ``workers``,
  ``sparsity``, ``batch_size`` (per worker), ``repeat``;
- ``samples_per_s``: global samples per second over the timed steps;
- ``payload_bytes_per_step``: bytes the hook handed to collectives, per rank;
- ``wire_bytes_per_step``: bytes rank 0's ``eth0`` sent per step (``None`` on loopback);
- ``ideal_bytes_per_step``: ``(1 - sparsity) x`` the dense fp32 gradient;
- ``ratio_to_ideal``: ``payload_bytes_per_step / ideal_bytes_per_step``;
- ``speedup_vs_dense``: samples/s over the mean of ``dense`` at the same model and bandwidth;
- ``step_s``: seconds per optimizer step (global batch / samples per second);
- ``exposed_comm_s_per_step``: ``step_s`` minus the compute floor's (the ``no-comm``
  method's mean ``step_s`` for the same model): the communication and compression time the
  backward pass did not hide (``None`` without a floor row);
- ``control_bytes_per_step`` (policy probes and agreements, mask checks) and
  ``total_bytes_per_step`` (payload + control); ``wire_vs_ring`` is the wire bytes over
  ``total x 2(N-1)/N``, what a ring all-reduce of the total sends: 1.0 is a wire that
  carries nothing but the counted bytes (framing and gloo's own traffic come on top);
- ``cpu_s_per_step``: rank 0's CPU seconds (all its threads) per timed step, evaluations
  left out; ``host_cores``: the cores the workers share; ``host_cpu_busy``: ``workers x
  cpu_s_per_step / (step_s x host_cores)``, the share of the host's cores the run kept
  busy (near 1.0: the cores, not the link, set the step; workers are alike, so rank 0
  stands for each);
- ``accuracy`` (classifiers) and ``perplexity`` (language models) at the end of the run;
- ``error``: why the run failed, else ``None``.

Each curve is one entrant of the time-to-accuracy race (:data:`REQUIRED_CURVE_FIELDS`):
``model``, ``method``, ``bandwidth`` (as in the rows), ``points`` as
``[training wall s, step, test accuracy]`` after each evaluation, ``reached_s`` and
``reached_step`` where the target was first met (else ``None``), and ``error``.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

Row = dict[str, Any]

REQUIRED_ROW_FIELDS = (
    "model", "method", "bandwidth", "workers", "sparsity", "batch_size", "repeat",
    "samples_per_s", "payload_bytes_per_step", "wire_bytes_per_step",
    "ideal_bytes_per_step", "ratio_to_ideal", "speedup_vs_dense", "accuracy", "perplexity",
    "error",
)

REQUIRED_CURVE_FIELDS = (
    "model", "method", "bandwidth", "points", "reached_s", "reached_step", "error",
)


def add_derived(rows: list[Row]) -> list[Row]:
    """Fill ``ideal_bytes_per_step``, ``ratio_to_ideal``, ``speedup_vs_dense``, ``step_s``
    and ``exposed_comm_s_per_step`` in place."""
    dense: dict[tuple[str, str], list[float]] = defaultdict(list)
    for row in rows:
        if row["method"] == "dense" and row.get("samples_per_s"):
            dense[(row["model"], row["bandwidth"])].append(row["samples_per_s"])
    floor: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        row["step_s"] = (row["batch_size"] * row["workers"] / row["samples_per_s"]
                         if row.get("samples_per_s") and row.get("batch_size") else None)
        if row["method"] == "no-comm" and row["step_s"]:
            floor[row["model"]].append(row["step_s"])
    for row in rows:
        base_step = floor.get(row["model"])
        row["exposed_comm_s_per_step"] = (row["step_s"] - statistics.mean(base_step)
                                          if base_step and row["step_s"] else None)
        full = row.get("dense_payload_bytes_per_step")
        ideal = full * (1.0 - row["sparsity"]) if full else None
        row["ideal_bytes_per_step"] = ideal
        payload = row.get("payload_bytes_per_step")
        row["ratio_to_ideal"] = payload / ideal if payload is not None and ideal else None
        total, wire, n = (row.get("total_bytes_per_step"), row.get("wire_bytes_per_step"),
                          row.get("workers") or 1)
        row["wire_vs_ring"] = (wire / (total * 2 * (n - 1) / n)
                               if total and wire is not None and n > 1 else None)
        cpu, cores = row.get("cpu_s_per_step"), row.get("host_cores")
        row["host_cpu_busy"] = (n * cpu / (row["step_s"] * cores)
                                if cpu is not None and cores and row["step_s"] else None)
        base = dense.get((row["model"], row["bandwidth"]))
        speed = row.get("samples_per_s")
        row["speedup_vs_dense"] = speed / statistics.mean(base) if base and speed else None
    return rows


def shown_method(method: str, sparsity: float | None) -> str:
    """The method as tables and legends show it. Why: the bench's ``dense`` entrant prunes
    like PacTrain (it is the pruned reference that the compacted tiers are measured
    against) and sends every bucket whole, so a table saying plain "dense" would read as
    unpruned training; ``--sparsity 0`` gives that."""
    if method == "dense" and sparsity:
        return f"dense (pruned to {100 * sparsity:g}%)"
    return method


def summarize(rows: list[Row]) -> list[Row]:
    """One line per (model, bandwidth, method): means over repeats, in grid order."""
    groups: dict[tuple[str, str, str], list[Row]] = {}
    for row in rows:
        groups.setdefault((row["model"], row["bandwidth"], row["method"]), []).append(row)
    out = []
    for (model, bandwidth, method), group in groups.items():
        ok = [r for r in group if r.get("error") is None]
        line: Row = {"model": model, "bandwidth": bandwidth, "method": method,
                     "runs": len(ok), "failed": len(group) - len(ok),
                     "sparsity": group[0].get("sparsity"),
                     "steps": min((r.get("steps") or 0 for r in group), default=0)}
        for key in ("samples_per_s", "speedup_vs_dense", "payload_bytes_per_step",
                    "wire_bytes_per_step", "ideal_bytes_per_step", "ratio_to_ideal",
                    "exposed_comm_s_per_step", "control_bytes_per_step", "total_bytes_per_step",
                    "wire_vs_ring", "cpu_s_per_step", "host_cpu_busy",
                    "accuracy", "perplexity"):
            values = [r[key] for r in ok if r.get(key) is not None]
            line[key] = statistics.mean(values) if values else None
            if key == "samples_per_s" and len(values) > 1:
                line["samples_per_s_spread"] = (min(values), max(values))
        out.append(line)
    return out


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


#: Runs shorter than this print no held-out metric: after a throughput run's few steps a
#: classifier sits near chance (10% on 10 classes) under every method, which reads as
#: broken; the race (``--time-to-accuracy``) is where accuracy is measured.
METRIC_MIN_STEPS = 100


def metric_hidden(rows: list[Row]) -> bool:
    """Whether some row's metric is left out of the table for being too short a run."""
    return any(0 < (r.get("steps") or 0) < METRIC_MIN_STEPS and
               (r.get("accuracy") is not None or r.get("perplexity") is not None)
               for r in rows)


def _metric(line: Row) -> str:
    if 0 < (line.get("steps") or 0) < METRIC_MIN_STEPS and (
            line.get("accuracy") is not None or line.get("perplexity") is not None):
        return f"({line['steps']} steps)"
    if line.get("accuracy") is not None:
        return f"acc {100 * line['accuracy']:.1f}%"
    if line.get("perplexity") is not None:
        return f"ppl {line['perplexity']:.2f}"
    return "-"


TABLE_HEADERS = ("model", "bandwidth", "method", "samples/s", "vs dense", "payload MB/step",
                 "wire MB/step", "payload/ideal", "exposed s/step", "CPU busy", "metric")


def table_cells(line: Row) -> list[str]:
    """The printed cells of one summary line (shared by the terminal and Markdown tables)."""
    mb = 1e6
    payload = line.get("payload_bytes_per_step")
    wire = line.get("wire_bytes_per_step")
    return [
        line["model"], line["bandwidth"],
        shown_method(line["method"], line.get("sparsity")) + (" (failed)" if not line["runs"]
                                                               else ""),
        _fmt(line.get("samples_per_s"), ".2f"),
        _fmt(line.get("speedup_vs_dense"), ".2f") + ("x" if line.get("speedup_vs_dense")
                                                     else ""),
        _fmt(payload / mb if payload is not None else None, ".2f"),
        _fmt(wire / mb if wire is not None else None, ".2f"),
        _fmt(line.get("ratio_to_ideal"), ".2f"),
        _fmt(line.get("exposed_comm_s_per_step"), ".3f"),
        _fmt(line.get("host_cpu_busy"), ".0%"),
        _metric(line),
    ]


def rich_table(rows: list[Row], title: str = "pactrain bench") -> Any:
    """The summary as a ``rich.table.Table``."""
    from rich.table import Table

    table = Table(title=title)
    for header in TABLE_HEADERS:
        table.add_column(header, justify="left" if header in TABLE_HEADERS[:3] else "right")
    for line in summarize(rows):
        table.add_row(*table_cells(line))
    return table


def markdown_table(rows: list[Row]) -> str:
    """The summary as a GitHub Markdown table (for docs/pactrain-bench.md)."""
    lines = ["| " + " | ".join(TABLE_HEADERS) + " |",
             "|" + "|".join("---" for _ in TABLE_HEADERS) + "|"]
    lines += ["| " + " | ".join(table_cells(line)) + " |" for line in summarize(rows)]
    return "\n".join(lines)


RACE_HEADERS = ("model", "bandwidth", "method", "time to target", "at step",
                "best metric", "evaluations")


def is_loss_curve(curve: dict[str, Any]) -> bool:
    """Whether the curve's points are held-out losses (lower is better), not accuracies."""
    return curve.get("metric", "test_accuracy") != "test_accuracy"


def race_cells(curve: dict[str, Any]) -> list[str]:
    """The printed cells of one race curve: when it reached the target, and how close."""
    values = [p[2] for p in curve["points"]]
    if is_loss_curve(curve):
        best = min(values, default=None)
        best_cell = "-" if best is None else f"loss {best:.3f}"
    else:
        best = max(values, default=None)
        best_cell = "-" if best is None else f"{100 * best:.1f}%"
    if curve.get("error"):
        reached = "failed"
    elif curve["reached_s"] is None:
        reached = "not reached"
    else:
        reached = f"{curve['reached_s']:.1f} s"
    return [curve["model"], curve["bandwidth"],
            shown_method(curve["method"], curve.get("sparsity")), reached,
            _fmt(curve["reached_step"], "d"),
            best_cell, str(len(curve["points"]))]


def race_title(curves: list[dict[str, Any]]) -> str:
    """What the race's curves raced to, e.g. "time to 88.0% test accuracy"."""
    targets = []
    for curve in curves:
        target = curve.get("target")
        if target is None:
            continue
        text = (f"held-out loss {target:.3f}" if is_loss_curve(curve)
                else f"{100 * target:.1f}% test accuracy")
        if text not in targets:
            targets.append(text)
    return "time to " + (" / ".join(targets) or "target") + " (training wall time)"


def rich_race_table(curves: list[dict[str, Any]], target: float | None = None) -> Any:
    """The race as a ``rich.table.Table``, in race order (``target`` is kept for callers
    that pass it; each curve carries its own)."""
    from rich.table import Table

    table = Table(title=race_title(curves))
    for header in RACE_HEADERS:
        table.add_column(header, justify="left" if header in RACE_HEADERS[:3] else "right")
    for curve in curves:
        table.add_row(*race_cells(curve))
    return table


def validate(document: dict[str, Any]) -> None:
    """Raise ``ValueError`` if ``document`` does not follow the bench JSON schema."""
    if not isinstance(document.get("rows"), list) or not isinstance(
            document.get("environment"), dict):
        raise ValueError('bench JSON must be {"rows": [...], "environment": {...}, ...}')
    for i, row in enumerate(document["rows"]):
        missing = [f for f in REQUIRED_ROW_FIELDS if f not in row]
        if missing:
            raise ValueError(f"row {i} ({row.get('model')}/{row.get('method')}) lacks "
                             f"{missing}; rerun pactrain bench to regenerate the file")
    for i, curve in enumerate(document.get("curves") or []):
        missing = [f for f in REQUIRED_CURVE_FIELDS if f not in curve]
        if missing:
            raise ValueError(f"curve {i} ({curve.get('model')}/{curve.get('method')}) lacks "
                             f"{missing}; rerun pactrain bench --time-to-accuracy to "
                             "regenerate the file")


#: What a benchmark writes beside each other under one ``--out`` prefix.
OUTPUT_EXTENSIONS = (".json", ".md", ".png")


def output_prefix(out: str | Path) -> Path:
    """The prefix of a benchmark's ``--out``: its files are the prefix plus ``.json``,
    ``.md`` and ``.png``. A user who names one of those files gets that file, not
    ``x.json.json``; any other dot stays (``x-s0.9`` is a prefix, not ``x-s0`` with a
    suffix, which is why ``Path.with_suffix`` is not used)."""
    text = str(out)
    for extension in OUTPUT_EXTENSIONS:
        if text.endswith(extension) and len(text) > len(extension):
            return Path(text[: -len(extension)])
    return Path(text)


def write_json(path: str | Path, rows: list[Row], environment: dict[str, Any],
               curves: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Validate and write the bench document; returns it."""
    document = {"rows": rows, "environment": environment, "curves": curves or []}
    validate(document)
    Path(path).write_text(json.dumps(document, indent=2, sort_keys=True, default=str))
    return document
