"""A recorded plan of the adaptive policy's decisions, and replaying it (issue 22, item 5).

The adaptive policy follows measured timing (link probes, observed collectives, the
backward pass's gaps), so two runs of one seed can pick different tiers when the machine's
load differs, and then end with different weights. Every PacTrain run records its
decisions as a *plan*: per bucket, the tier and the step from which it held (the result's
``plan``; ``[{"step": 0, "bucket": 0, "tier": "packed"}, ...]``). A run given that plan
(``pactrain train --plan FILE``, ``attach(..., plan=...)``) takes the same tier for the
same bucket at the same step and measures nothing: no probes, no refreshes, no overlap
planning. Its result is then a function of its seed, config and plan alone.

The plan also holds the run's operating point (:mod:`pactrain.operating_point`: the
pruning schedule and the send budget the policy chose once it had timed a step, and each
revision of the budget): ``{"step": 1, "operating_point": {...}}``. Replayed, the same
point takes hold at the same step.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pactrain.operating_point import OperatingPoint
from pactrain.policy import MeasuresNothing

PlanSource = str | Path | list[dict[str, Any]] | dict[str, Any]
"""A plan: a JSON file (a run's result, or the list alone), the list, or a result dict."""


class PlanError(ValueError):
    """A plan that cannot be read or replayed; the message says which entry and why."""


def load_plan(source: PlanSource, tiers: tuple[str, ...]) -> list[dict[str, Any]]:
    """The plan's entries, checked (steps and buckets are integers >= 0, tiers known),
    in step order.

    Raises:
        PlanError: an unreadable file, no ``plan`` in a result, or a malformed entry.
    """
    data: Any = source
    if isinstance(source, (str, Path)):
        try:
            data = json.loads(Path(source).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise PlanError(f"cannot read the plan {source}: {exc}") from exc
    if isinstance(data, dict):
        if "plan" not in data:
            raise PlanError("no 'plan' in this JSON: give the result JSON of a "
                            "`pactrain train --method pactrain` run, or its plan list")
        data = data["plan"]
    if not isinstance(data, list) or not data:
        raise PlanError("a plan is a non-empty list of {step, bucket, tier} entries")
    entries = []
    for k, entry in enumerate(data):
        if isinstance(entry, dict) and set(entry) == {"step", "operating_point"}:
            entries.append(_operating_point_entry(k, entry))
            continue
        if not isinstance(entry, dict) or set(entry) != {"step", "bucket", "tier"}:
            raise PlanError(f"plan entry {k} must have exactly step, bucket and tier (or "
                            f"step and operating_point): {entry!r}")
        step, bucket, tier = entry["step"], entry["bucket"], entry["tier"]
        if not (isinstance(step, int) and isinstance(bucket, int) and step >= 0
                and bucket >= 0):
            raise PlanError(f"plan entry {k}: step and bucket must be integers >= 0: "
                            f"{entry!r}")
        if tier not in tiers:
            raise PlanError(f"plan entry {k}: unknown tier {tier!r}; tiers: "
                            f"{', '.join(tiers)}")
        entries.append({"step": step, "bucket": bucket, "tier": tier})
    return sorted(entries, key=lambda e: (e["step"], e.get("bucket", -1)))


def _operating_point_entry(k: int, entry: dict[str, Any]) -> dict[str, Any]:
    """A checked ``{"step", "operating_point"}`` entry.

    Raises:
        PlanError: a step that is not an integer >= 0, or a point that cannot be read.
    """
    step, point = entry["step"], entry["operating_point"]
    if not (isinstance(step, int) and step >= 0):
        raise PlanError(f"plan entry {k}: step must be an integer >= 0: {entry!r}")
    try:
        OperatingPoint.from_dict(point)
    except (TypeError, ValueError, AttributeError) as exc:
        raise PlanError(f"plan entry {k}: not an operating point ({exc}): {point!r}") from exc
    return {"step": step, "operating_point": dict(point)}


@dataclass
class ReplayPolicy(MeasuresNothing):
    """Takes the tiers a plan says, bucket by bucket and step by step (see the module
    docstring); the other policy calls do nothing, as a fixed tier's do."""

    entries: list[dict[str, Any]]
    version: int = 0
    _by_bucket: dict[int, list[tuple[int, str]]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for entry in self.entries:
            if "tier" in entry:
                self._by_bucket.setdefault(entry["bucket"], []).append(
                    (entry["step"], entry["tier"]))

    @property
    def tiers(self) -> set[str]:
        return {e["tier"] for e in self.entries if "tier" in e}

    @property
    def holds_operating_points(self) -> bool:
        """Whether the plan records operating points (runs of the adaptive method that
        measured; a plan without them replays tiers only)."""
        return any("operating_point" in e for e in self.entries)

    def operating_point_at(self, step: int) -> OperatingPoint | None:
        """The operating point the plan says takes hold at ``step`` (``None``: none)."""
        for entry in self.entries:
            if "operating_point" in entry and entry["step"] == step:
                return OperatingPoint.from_dict(entry["operating_point"])
        return None

    def tier_at(self, step: int, bucket: int) -> str:
        """The tier the plan holds for ``bucket`` at ``step``.

        Raises:
            PlanError: the plan says nothing of this bucket by this step (recorded with
                another model, bucket size or world size).
        """
        chosen = None
        for start, tier in self._by_bucket.get(bucket, ()):
            if start > step:
                break
            chosen = tier
        if chosen is None:
            raise PlanError(f"the plan has no tier for bucket {bucket} at step {step}; it "
                            "was recorded with another model, --bucket-cap-mb or worker "
                            "count, or from a later step")
        return chosen

    def state_dict(self) -> dict[str, Any]:
        return {"plan": self.entries}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """The plan comes from the run's settings, not from a checkpoint."""
