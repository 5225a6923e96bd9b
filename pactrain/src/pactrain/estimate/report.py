"""The estimate as a table (``pactrain estimate`` and the projection script)."""

from __future__ import annotations

from typing import Any

from pactrain.estimate.step import StepEstimate

#: Columns of :func:`estimate_table`.
COLUMNS = ("method", "step s", "compute s", "local s", "exposed s", "payload/rank",
           "x dense")


def estimate_cells(e: StepEstimate, dense: StepEstimate | None) -> list[str]:
    return [e.method, f"{e.step_s:.3f}", f"{e.compute_s:.3f}", f"{e.local_s:.3f}",
            f"{e.exposed_s:.3f}", f"{e.payload_bytes / 1e3:,.0f} KB",
            f"{dense.step_s / e.step_s:.2f}" if dense else "-"]


def estimate_table(estimates: list[StepEstimate], title: str) -> Any:
    """A rich table, the fastest method in bold green."""
    from rich.table import Table

    dense = next((e for e in estimates if e.method == "dense"), None)
    table = Table(title=title)
    for column in COLUMNS:
        # the method's name whole, the numbers narrowed first on a narrow terminal
        table.add_column(column, justify="left" if column == "method" else "right",
                         no_wrap=column == "method", min_width=16 if column == "method" else None)
    best = min(e.step_s for e in estimates)
    for e in estimates:
        table.add_row(*estimate_cells(e, dense),
                      style="bold green" if e.step_s == best else None)
    return table
