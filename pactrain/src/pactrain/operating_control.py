"""Puts the operating point (:mod:`pactrain.operating_point`) into effect on a running job.

Why apart from the choice: the choice is a pure function of agreed numbers (tested
alone); this module is the part that talks to the group and touches the run: it times
and agrees on the compute, reschedules the pruner, sets the compaction hook's send
budget, records the point in the run's plan and carries it across a checkpoint.

When (every rank at the same step, from
:meth:`pactrain.methods.pactrain.PacTrainMethod.on_step_end`):

- construction (:meth:`OperatingControl.start`): the provisional point
  (:func:`pactrain.operating_point.provisional`: the floor budget from step 0, nothing
  pruned before the decision, so a fast link undoes it);
- the end of step :data:`DECIDE_AFTER` (1): the decision, taking hold at the next step.
  The faster of the two steps' compute times is what it weighs the link against (step
  0's alone is inflated by DDP's and the allocator's first-iteration work: 153 ms
  against 11 ms on a small MLP here, which would have called a slow link fast);
- the overlap-planning step and every link refresh: the send budget is revisited with the
  median of the latest steps' compute and the refreshed link
  (:func:`pactrain.operating_point.revisit_send_density`).

Per step it costs one attribute check; the decision's collective (one 8-byte MAX) runs
at those few steps only.
"""

from __future__ import annotations

import logging
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch.distributed as dist

from pactrain.operating_point import (
    SCHEDULE_SETTINGS,
    Measured,
    OperatingPoint,
    Rules,
    choose,
    provisional,
    revisit_send_density,
)
from pactrain.policy import AdaptivePolicy, agree_numbers
from pactrain.pruning import PruningConfig

if TYPE_CHECKING:
    from pactrain.compaction import CompactionState
    from pactrain.plan import ReplayPolicy

LOG = logging.getLogger(__name__)

#: The step after which the first operating point is chosen (see the module docstring).
DECIDE_AFTER = 1


def schedule_from(point: OperatingPoint, base: PruningConfig, total_steps: int,
                  from_step: int, frequency: int | None) -> PruningConfig:
    """The pruner's schedule for ``point``, starting no earlier than ``from_step`` (masks
    are updated before a step's forward, and steps before it have run)."""
    start = max(from_step, int(point.prune_start * total_steps))
    end = max(start, int(point.prune_end * total_steps))
    return PruningConfig(final_sparsity=base.final_sparsity, start_step=start, end_step=end,
                         frequency=frequency or max(1, (end - start) // 10),
                         initial_sparsity=min(point.prune_initial, base.final_sparsity),
                         scope=base.scope)


@dataclass
class OperatingControl:
    """The operating point of one rank's run (see the module docstring).

    Attributes:
        state: the compaction hook's state (tracker, policy, communicator, send budget).
        total_steps: the run's length (the schedule's fractions are of it).
        user: the operating-point settings the user fixed (names of
            :data:`pactrain.operating_point.CHOSEN_SETTINGS`; the others are chosen).
        entries: gradient entries per step (every trainable parameter's).
        frequency: the user's ``prune_frequency`` (``None``: about 10 updates).
        error_feedback_fixed: the user chose error feedback; else the codes' error is
            kept once the policy samples (as ``make_pactrain`` does for a user's
            ``send_density``).
        rules: the numbers of the choice.
        point: the point in effect (the provisional one until the decision).
        decided: whether the decision after :data:`DECIDE_AFTER` was taken.
        base_error_feedback: the state's error feedback when not sampling (restored if
            the decision drops the provisional budget).
    """

    state: CompactionState
    total_steps: int
    user: dict[str, Any]
    entries: int
    frequency: int | None = None
    error_feedback_fixed: bool = False
    rules: Rules = field(default_factory=Rules)
    point: OperatingPoint | None = None
    decided: bool = False
    base_error_feedback: bool = False

    def start(self) -> None:
        """Put the provisional point (or a replayed plan's first) in effect before step 0;
        its schedule is laid from the decision's step on, so no mask is taken before it."""
        self.base_error_feedback = self.state.error_feedback
        replay = self._replay()
        point = replay.operating_point_at(0) if replay is not None else provisional(
            self.user, self.rules)
        if point is not None:
            self.apply(point, 0, schedule_from_step=DECIDE_AFTER + 1)

    # -- when ----------------------------------------------------------------------------
    def after_step(self, step: int, revisit: bool) -> None:
        """Decide after step 0; revisit the budget when ``revisit`` (collective)."""
        replay = self._replay()
        if replay is not None:
            point = replay.operating_point_at(step + 1)
            if point is not None:
                self.apply(point, step + 1)
            return
        if not self.decided and step == DECIDE_AFTER:
            self.apply(choose(self._price, self._measured(min), self.user, self.rules,
                              step + 1), step + 1)
        elif self.decided and self.point is not None and revisit:
            changed = revisit_send_density(self.point, self._price, self._measured(),
                                           self.rules, step + 1)
            if changed is not None:
                self.apply(changed, step + 1)

    # -- effect --------------------------------------------------------------------------
    def apply(self, point: OperatingPoint, from_step: int, record: bool = True,
              schedule_from_step: int | None = None) -> None:
        """Reschedule the pruner (while no mask has been taken: masks taken stay taken),
        set the send budget and the codes' error feedback, and record the point in the
        plan. ``schedule_from_step``: the first step the schedule may prune at (default
        ``from_step``)."""
        self.point = point
        self.decided = self.decided or point.step > 0
        pruner = self.state.tracker.pruner
        if self.state.tracker.mask_version == 0 and any(
                point.chosen_by.get(name) != "user" for name in SCHEDULE_SETTINGS):
            pruner.config = schedule_from(
                point, pruner.config, self.total_steps,
                from_step if schedule_from_step is None else schedule_from_step,
                self.frequency)
        sampling = point.send_density is not None
        if not self.error_feedback_fixed:
            self.state.error_feedback = True if sampling else self.base_error_feedback
        self.state.set_send_density(point.send_density)
        if record:
            self.state.plan.append({"step": from_step, "operating_point": point.to_dict()})
            for line in point.reasons:
                LOG.info("operating point from step %d: %s", from_step, line)

    # -- measurements --------------------------------------------------------------------
    def _price(self, sent: int) -> float:
        policy = self.state.policy
        assert isinstance(policy, AdaptivePolicy)
        return policy.cheapest(self.entries, sent, self.state.world_size)

    def _measured(self, pick: Callable[[Any], float] = statistics.median) -> Measured:
        """The group's compute per step (MAX over ranks of ``pick`` over this rank's
        latest steps: ``min`` of the first two, the median later)."""
        samples = self.state.comm.compute_samples
        local = pick(samples) if samples else 0.0
        agreed, = agree_numbers([local], self.state.comm, dist.ReduceOp.MAX)
        return Measured(max(agreed, 1e-6), self.entries, self.state.world_size)

    def _replay(self) -> ReplayPolicy | None:
        return self.state.policy if hasattr(self.state.policy, "operating_point_at") else None

    # -- checkpoint ----------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {"point": None if self.point is None else self.point.to_dict(),
                "decided": self.decided, "base_error_feedback": self.base_error_feedback,
                "schedule": self.state.tracker.pruner.config.__dict__.copy()}

    def load_state_dict(self, saved: dict[str, Any] | None) -> None:
        """Put a saved point back in effect (its schedule as it was laid, its budget),
        without recording it again (the plan is restored with the hook's state)."""
        if not saved or saved.get("point") is None:
            return
        self.base_error_feedback = bool(saved.get("base_error_feedback",
                                                  self.base_error_feedback))
        self.apply(OperatingPoint.from_dict(saved["point"]), 0, record=False)
        self.decided = bool(saved.get("decided", True))
        if saved.get("schedule") is not None:
            self.state.tracker.pruner.config = PruningConfig(**saved["schedule"])

    def summary(self) -> dict[str, Any] | None:
        return None if self.point is None else self.point.to_dict()
