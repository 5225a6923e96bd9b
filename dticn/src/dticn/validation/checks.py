"""One number of theirs beside ours (:class:`Check`), how it is judged, and how much to run.

Tolerances: the issue's (issue 16: Table 5 and Table 8 power/lifetime within 15%; Fig. 22
CAP delivery within 10 points and CAP median delay under 10 s; GTS unchanged, read as
delivery within 10 points); where the issue sets none (Table 7, Table 8 delay, Fig. 23) we
use 15% and say so (``tolerance_source``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

Progress = Callable[[str], None]
"""Called with a label before each step of a run (a progress bar's text)."""


@dataclass
class Check:
    """One number of theirs beside ours.

    ``metric`` and ``point`` say what a row measures where other code looks rows up
    (``cap_delivery`` at ``100/80``: 100 nodes, one frame per 80 s), so nothing finds a row
    by its position or by the words of its label.
    """

    section: str
    item: str
    unit: str
    theirs: float | None
    ours: float
    source: str
    tolerance: str                      # "15%", "10 points", "< 10 s", "-" (none)
    tolerance_source: str = "issue 16"
    passed: bool | None = None          # None: no tolerance (shown for information)
    diff: str = ""
    method: str = ""
    cause: str = ""
    metric: str = ""
    point: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def within_relative(check: Check, rel: float) -> Check:
    """Judge ``check`` by its relative difference (``rel`` 0.15: within 15%)."""
    assert check.theirs is not None
    d = (check.ours - check.theirs) / check.theirs
    check.diff = f"{100 * d:+.1f}%"
    check.passed = abs(d) <= rel
    return check


def within_points(check: Check, points: float) -> Check:
    """Judge a ratio by its difference in percentage points."""
    assert check.theirs is not None
    d = 100 * (check.ours - check.theirs)
    check.diff = f"{d:+.1f} pt"
    check.passed = abs(d) <= points
    return check


def rows_of(doc: dict[str, Any], section: str, metric: str) -> list[dict[str, Any]]:
    """The rows of one section of a report's JSON that measure ``metric``, in order."""
    rows = doc["sections"].get(section, {}).get("rows", [])
    return [r for r in rows if r.get("metric") == metric]


@dataclass
class Plan:
    """How much to run: ``quick`` for tests (about a minute), full for the page."""

    quick: bool
    table5_intervals: int = 200
    table7_hours: float = 2000.0
    table8_frames: int = 2000
    fig22_seeds: int = 2
    fig22_cap_horizon_s: float = 7200.0
    fig22_gts_frames: int = 300          # per node: their numPackets = 300
    fig23_frames: int = 20000
    sensitivity: bool = True
    sensitivity_horizon_s: float = 3600.0

    @classmethod
    def make(cls, quick: bool) -> Plan:
        if not quick:
            return cls(False)
        return cls(True, table5_intervals=40, table7_hours=200.0, table8_frames=300,
                   fig22_seeds=1, fig22_cap_horizon_s=900.0, fig22_gts_frames=100,
                   fig23_frames=2000, sensitivity=False)
