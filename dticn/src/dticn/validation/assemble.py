"""The whole report: which sections run in which order, its JSON, and re-running a part.

``dticn validate`` drives :func:`validate` (with a progress bar of :func:`step_count`
steps), writes :meth:`Report.as_dict` as JSON and the page from it
(:mod:`dticn.validation.markdown`); :func:`rerun` runs parts of a stored report again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from dticn.validation import dsme_tables, fig22
from dticn.validation.cap_gap import fig22_sensitivity, missing_rows, row_count
from dticn.validation.checks import Check, Plan, Progress
from dticn.validation.paper import PAPER, SOURCE

SECTIONS: tuple[tuple[str, str], ...] = (
    ("table5", "Table 5: energy per beacon interval"),
    ("table7", "Table 7: maximum GTS load"),
    ("table8", "Table 8: GTS sender power, lifetime and delay"),
    ("fig22", "Fig. 22: CAP and GTS at 100/300 nodes, every node 10 m from the gateway"),
    ("fig22_layout", "Fig. 22 in their simulation's layout and channel"),
    ("fig23", "Fig. 23b: GTS mean delay"),
)
LAYOUTS = (("fig22", "disc"), ("fig22_layout", "rings"))
"""The two Fig. 22 sections and the layout each runs in."""


def section(title: str, checks: list[Check]) -> dict[str, Any]:
    """One section of the report's JSON: its rows and how many of the judged ones pass."""
    rows = [c.as_dict() for c in checks]
    judged = [r for r in rows if r["passed"] is not None]
    return {"title": title, "rows": rows, "passed": sum(bool(r["passed"]) for r in judged),
            "judged": len(judged)}


@dataclass
class Report:
    """Every check of one run, the sensitivity rows and the link budget."""

    quick: bool
    checks: list[Check] = field(default_factory=list)
    sensitivity: list[dict[str, Any]] = field(default_factory=list)
    link_budget: dict[str, dict[str, float]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        sections = {key: section(title, [c for c in self.checks if c.section == key])
                    for key, title in SECTIONS}
        return {"source": SOURCE, "quick": self.quick, "sections": sections,
                "fig22_sensitivity": self.sensitivity,
                "fig22_link_budget": self.link_budget}


def _steps(plan: Plan, say: Progress) -> list[tuple[str, Callable[[], Iterator[Check]]]]:
    """The report's steps in order, each with its progress label."""
    return [
        ("Table 5 (S1, S2, S3)", lambda: dsme_tables.table5(plan)),
        ("Table 7 (model and simulation)", lambda: dsme_tables.table7(plan)),
        ("Table 8 (MO 3-7)", lambda: dsme_tables.table8(plan)),
        ("Fig. 23 (model and simulation)", lambda: dsme_tables.fig23(plan)),
        ("Fig. 22", lambda: fig22.fig22(plan, say)),
        ("Fig. 22 in their layout", lambda: fig22.fig22(plan, say, layout="rings")),
    ]


def validate(quick: bool = False, progress: Progress | None = None) -> Report:
    """Run every section; ``progress(label)`` before each step."""
    say = progress or (lambda label: None)
    plan = Plan.make(quick)
    report = Report(quick)
    for label, step in _steps(plan, say):
        say(label)
        report.checks.extend(step())
    report.link_budget = {str(n): fig22.fig22_link_budget(n) for n in (100, 300)}
    if plan.sensitivity:
        report.sensitivity = fig22_sensitivity(plan, say)
    return report


def step_count(quick: bool) -> int:
    """Progress labels :func:`validate` says (a progress bar's total): one per step, one
    per Fig. 22 point in each layout, one per sensitivity row and point."""
    plan = Plan.make(quick)
    say: Progress = lambda label: None  # noqa: E731
    n = len(_steps(plan, say)) + len(LAYOUTS) * fig22.progress_steps()
    if plan.sensitivity:
        n += row_count() * len(PAPER["fig22_cap_delivery"])
    return n


#: Parts of a report :func:`rerun` can run again, keeping the rest of the JSON
#: (``fig22-sensitivity-missing``: only the sensitivity rows the report lacks).
RERUN_PARTS = ("fig22", "fig22-layout", "fig22-sensitivity", "fig22-sensitivity-missing")


def rerun(doc: dict[str, Any], parts: list[str], progress: Progress | None = None
          ) -> dict[str, Any]:
    """Run ``parts`` of a report again (full mode) and put them into ``doc``; the other
    sections keep their committed numbers (a full run takes hours on a shared machine)."""
    unknown = [p for p in parts if p not in RERUN_PARTS]
    if unknown:
        raise ValueError(f"cannot rerun {', '.join(unknown)}; parts: {', '.join(RERUN_PARTS)}")
    say = progress or (lambda label: None)
    plan = Plan.make(bool(doc.get("quick")))
    titles = dict(SECTIONS)
    for key, layout in LAYOUTS:
        if key.replace("_", "-") in parts:
            doc["sections"][key] = section(titles[key],
                                           list(fig22.fig22(plan, say, layout=layout)))
    if "fig22-sensitivity" in parts:
        doc["fig22_sensitivity"] = fig22_sensitivity(plan, say)
    elif "fig22-sensitivity-missing" in parts:
        doc["fig22_sensitivity"] = missing_rows(plan, say, doc.get("fig22_sensitivity", []))
    return doc
