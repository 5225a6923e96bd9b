""":class:`CompactionState`: everything the compaction hook carries between calls, composed
of one part per job (layouts, sampler, buffers, draws, overlap timing, residuals, the
maxima agreed ahead), plus the tier decisions, the plan and the checkpoint."""

from __future__ import annotations

import logging
from collections import Counter, deque
from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist

from pactrain.accounting import PayloadCounter
from pactrain.compaction.ahead_maxima import AheadMaxima
from pactrain.compaction.buffers import BufferPool
from pactrain.compaction.draws import Draws
from pactrain.compaction.layout import BucketLayout, LayoutTable
from pactrain.compaction.options import (
    check_policy,
    check_rounding,
    check_send_density,
    check_send_select,
)
from pactrain.compaction.sampling import ChunkTable, Sample, Sampler
from pactrain.compaction.timing import OverlapTiming
from pactrain.compression.communicator import Communicator, OrderedLauncher
from pactrain.compression.compressors import Bounds
from pactrain.compression.memory import ParameterNames, ResidualMemory
from pactrain.masks import MaskTracker
from pactrain.policy import AdaptivePolicy, FixedPolicy, TierDecision
from pactrain.tiers import all_tiers
from pactrain.tiers.base import TierContext

# the decisions are logged under the package's name, as before it was split
LOG = logging.getLogger("pactrain.compaction")


class CompactionState:
    """Everything :func:`~pactrain.compaction.hook.compaction_hook` carries between calls
    (one per rank).

    Args:
        process_group: the group (``None``: default group).
        tracker: the mask tracker (masks and ``mask_version``).
        world_size, rank, seed: the group's size, this rank, the run seed (seed the
            per-parameter ternary draws with the step count).
        policy: :class:`FixedPolicy` or :class:`AdaptivePolicy`; it observes every
            collective's size and duration (the link model's refresh).
        error_feedback: keep residuals of lossy tiers.
        model: the module whose parameters DDP buckets (names per-parameter state so a
            resumed run with another bucket layout continues identically); ``None``
            names parameters by the pruner's names and their bucket positions.
        scale_group: a second group over the same ranks for the ternary MAX scales
            (``None``: ``process_group``). Why: the hook waits for the scales before it can
            encode, and on one group that collective queues behind the previous bucket's
            codes still on the wire, stalling the backward pass for a whole transfer; on
            its own group it takes one round trip. Both groups see their collectives in
            bucket order on every rank, so matching is unchanged.
        comm: the communicator (``None``: one over ``process_group`` that the policy
            observes).
        send_density: send at most this share of each bucket's entries per step
            (:class:`~pactrain.compaction.sampling.Sampler`); ``None``: every kept entry
            every step. What is not sent waits in the residual whatever
            ``error_feedback`` says; ``error_feedback`` decides only whether the lossy
            tiers' quantization error is kept too (the unsent entries' residual is delayed
            gradient; the PacTrain methods keep the codes' error by default when sampling,
            :func:`pactrain.methods.pactrain.make_pactrain`).
        send_select: how the sample is chosen (:data:`SEND_SELECTIONS`).
        rounding: how the ternary tiers round (:data:`ROUNDINGS`); ``nearest`` draws
            nothing and is refused with ``error_feedback=False`` (what it rounds away
            would be lost).
        may_sample: keep a residual memory even when neither ``error_feedback`` nor
            ``send_density`` asks for one, so that :meth:`set_send_density` may start
            sampling later.

    Raises:
        ValueError: a forced tier that does not serve this many workers (ternary above
            127); ``send_density`` outside (0, 1], an unknown ``send_select`` or
            ``rounding``, ``nearest`` rounding without error feedback.
    """

    def __init__(
        self, process_group: Any, tracker: MaskTracker, world_size: int, rank: int,
        seed: int, policy: FixedPolicy | AdaptivePolicy, error_feedback: bool = True,
        model: torch.nn.Module | None = None, scale_group: Any = None,
        comm: Communicator | None = None, send_density: float | None = None,
        send_select: str = "topk", rounding: str = "stochastic", may_sample: bool = False,
    ) -> None:
        self.tiers = all_tiers()
        check_policy(self.tiers, policy, world_size)
        check_send_density(send_density)
        check_send_select(send_select, error_feedback)
        check_rounding(rounding, error_feedback)
        self.rounding = rounding
        self.sampler = Sampler(tracker, seed, send_density, send_select)
        """The agreed sample of ``send_density`` and its caches."""
        self.comm = comm or Communicator(process_group, observer=policy.observe)
        self.scale_group = scale_group if scale_group is not None else process_group
        self.scales_apart = scale_group is not None and scale_group is not process_group
        """The MAX of the scales runs on its own group, so the codes may be issued from its
        completion (:class:`OrderedLauncher`); on one group that would race with the next
        bucket's MAX, so the hook then waits for its scales."""
        self.tracker = tracker
        self.world_size = world_size
        self.rank = rank
        self.seed = seed
        self.policy = policy
        # the residual: quantization errors (error_feedback) and, when sampling, what was
        # not sent this step (kept whatever error_feedback says: nothing may be lost)
        self.error_feedback = error_feedback
        keeps_residual = error_feedback or send_density is not None or may_sample
        self.memory = ResidualMemory() if keeps_residual else None
        self.step = 0  # synchronized steps seen (seeds the ternary draws)
        self.gradients_masked = False
        """Every bucket of the latest backward went through this hook, so every pruned
        gradient entry is already zero (scattered into a zeroed bucket, or masked by the
        dense tier); :meth:`take_gradients_masked` reads and clears it."""
        self.tier_counts: dict[int, Counter] = {}
        self.plan: list[dict[str, Any]] = []
        """The tiers taken, as a replayable plan (:mod:`pactrain.plan`)."""
        self._planned: dict[int, str] = {}
        names = (ParameterNames(model) if model is not None
                 else ParameterNames.of(tracker.pruner.params.items()))
        self.layout_table = LayoutTable(tracker, names)
        self.decisions: dict[int, tuple[tuple, int, TierDecision]] = {}
        self.buffers = BufferPool()
        """Per bucket index, reused every step: gathered entries, their copy, draws."""
        self.draws = Draws(seed, rank, self.buffers)
        self.timing = OverlapTiming()
        self.launcher = OrderedLauncher()
        """Issues each bucket's codes once its agreed scales are in, in bucket order."""
        self.ahead = AheadMaxima()
        """``topk-ahead``: the chunk maxima agreed for the next step
        (:func:`~pactrain.compaction.send.send_ahead`)."""

    @property
    def process_group(self) -> Any:
        return self.comm.process_group

    @property
    def payload(self) -> PayloadCounter:
        return self.comm.payload

    def take_gradients_masked(self) -> bool:
        """Whether the gradients the optimizer is about to use came out of this hook (and
        so need no masking again), clearing the flag for the next step. Why: masking a
        gradient the hook already masked is a full pass over every pruned matrix per step
        (9.5% of a fashion-cnn worker's time in a py-spy profile, 4 workers on 2 cores),
        and changes nothing."""
        masked, self.gradients_masked = self.gradients_masked, False
        return masked

    # -- sampling ------------------------------------------------------------------------
    @property
    def send_density(self) -> float | None:
        return self.sampler.send_density

    @property
    def send_select(self) -> str:
        return self.sampler.send_select

    def set_send_density(self, value: float | None) -> None:
        """Change ``send_density`` from the next bucket on (an adaptive operating point;
        every rank must change it at the same step). Forgets what depended on it: the
        send ratio, the chunk tables and their budgets, and the cached tier decisions
        (the entries sent per step, which the policy prices, change).

        Raises:
            ValueError: ``value`` outside (0, 1], or sampling asked of a state built
                without a residual memory (what is not sent would be lost; build it with
                ``may_sample=True``).
        """
        check_send_density(value)
        if value is not None and self.memory is None:
            raise ValueError("sampling keeps what it does not send in the residual, and "
                             "this state has none; build it with may_sample=True")
        self.sampler.set_send_density(value)
        self.decisions.clear()

    def sent_estimate(self, layout: BucketLayout) -> int:
        """:meth:`Sampler.sent_estimate <pactrain.compaction.sampling.Sampler.sent_estimate>`."""
        return self.sampler.sent_estimate(layout)

    def stride(self, layout: BucketLayout) -> int:
        """:meth:`Sampler.stride <pactrain.compaction.sampling.Sampler.stride>`."""
        return self.sampler.stride(layout)

    def sample(self, layout: BucketLayout) -> Sample | None:
        """This step's :meth:`Sampler.sample <pactrain.compaction.sampling.Sampler.sample>`."""
        return self.sampler.sample(layout, self.step)

    def chunk_table(self, layout: BucketLayout) -> ChunkTable:
        """:meth:`Sampler.chunk_table <pactrain.compaction.sampling.Sampler.chunk_table>`."""
        return self.sampler.chunk_table(layout)

    def top_chunks(self, layout: BucketLayout, agreed: torch.Tensor) -> Sample:
        """:meth:`Sampler.top_chunks <pactrain.compaction.sampling.Sampler.top_chunks>`."""
        return self.sampler.top_chunks(layout, agreed)

    # -- layouts, draws ------------------------------------------------------------------
    @property
    def layouts(self) -> dict[int, BucketLayout]:
        """The latest layout of each bucket index (:class:`LayoutTable`)."""
        return self.layout_table.by_index

    def layout(self, bucket: dist.GradBucket) -> BucketLayout:
        """The bucket's layout, rebuilt when its key changes (:class:`LayoutTable`)."""
        return self.layout_table.find(bucket)

    def half_thresholds(self, index: int, count: int, device: torch.device) -> torch.Tensor:
        """:meth:`Draws.half_thresholds <pactrain.compaction.draws.Draws.half_thresholds>`."""
        return self.draws.half_thresholds(index, count, device)

    def context(self, index: int, layout: BucketLayout, bounds: Bounds,
                per_slot: tuple[int, ...], scales: torch.Tensor | None = None,
                step: int | None = None) -> TierContext:
        """What a tier's send of bucket ``index`` needs (``bounds``/``per_slot``: the
        parameters' segments of the entries it sends; ``step``: the bucket's step, which
        seeds the draws, ``None``: the current one when the tier draws)."""
        step_of: Callable[[], int] = (lambda: self.step) if step is None else (lambda: step)
        draws = self.draws.source(self.rounding, index, layout, per_slot, step_of)
        return TierContext(self.comm, self.world_size, self.scale_group, bounds,
                           draws=draws, wants_error=self.error_feedback, scales=scales)

    # -- tier decisions and the plan -----------------------------------------------------
    def decide(self, index: int, layout: BucketLayout) -> TierDecision:
        """The bucket's tier, recomputed when the layout or the policy changes (a replayed
        plan, :class:`pactrain.plan.ReplayPolicy`, says it per step)."""
        tier_at = getattr(self.policy, "tier_at", None)
        if tier_at is not None:
            return TierDecision(tier_at(self.step, index), layout.numel,
                                self.sent_estimate(layout), {})
        cached = self.decisions.get(index)
        if cached is not None and cached[0] == layout.key and cached[1] == self.policy.version:
            return cached[2]
        budget = self.policy.hide_budget(index)
        decision = self.policy.decide(layout.numel, self.sent_estimate(layout),
                                      self.world_size, budget)
        previous = cached[2].tier if cached else None
        if decision.tier != previous:
            LOG.info("bucket %d: %d of %d entries kept (density %.3f), hide budget %.3fs "
                     "-> %s %s", index, decision.kept, decision.numel, decision.density,
                     budget, decision.tier,
                     {k: f"{v:.2e}s" for k, v in decision.costs.items()})
        self.decisions[index] = (layout.key, self.policy.version, decision)
        return decision

    def record_plan(self, index: int, tier: str) -> None:
        """Add to the run's plan when bucket ``index`` changes tier (:mod:`pactrain.plan`)."""
        if self._planned.get(index) != tier:
            self._planned[index] = tier
            self.plan.append({"step": self.step, "bucket": index, "tier": tier})

    # -- overlap timing ------------------------------------------------------------------
    @property
    def gap_samples(self) -> dict[int, deque[float]]:
        """Recent gaps per bucket index (:class:`OverlapTiming`)."""
        return self.timing.gap_samples

    def note_ready(self, index: int) -> None:
        """Record when bucket ``index`` reached the hook (its gradients were ready)."""
        self.timing.note_ready(index)

    def close_step_timing(self) -> None:
        """Turn this step's hook calls into gaps (:meth:`OverlapTiming.close_step`)."""
        self.timing.close_step()

    def plan_overlap(self) -> None:
        """Give the policy each bucket's median recent gap (collective: all ranks call
        it at the same step). Only buckets of the latest layout take part."""
        gaps = self.timing.median_gaps(self.layouts)
        if gaps:
            self.policy.plan_overlap(gaps, self.comm)

    # -- checkpoint ----------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Masks, mask version, schedule position, residuals per parameter name, link
        model, step counter."""
        return {
            "tracker": self.tracker.state_dict(),
            "policy": self.policy.state_dict(),
            "residuals": self.memory.state_dict()["residuals"] if self.memory else {},
            "step": self.step,
            "tier_counts": {i: dict(c) for i, c in self.tier_counts.items()},
            "plan": list(self.plan),
            "send_density": self.send_density,
            "send_select": self.send_select,
            "rounding": self.rounding,
            "error_feedback": self.error_feedback,
            "ahead_maxima": self.ahead.state_dict(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`; caches are rebuilt on the next call.

        Raises:
            ValueError: the checkpoint was written with another ``send_density``,
                ``send_select``, ``rounding`` or ``error_feedback`` (its residuals hold
                what that setting left unsent or rounded away; resuming with another
                would silently change the run).
        """
        # a checkpoint from before sampling existed has neither key: it did not sample
        written = {"send_density": state.get("send_density"),
                   "send_select": state.get("send_select", self.send_select),
                   "rounding": state.get("rounding", "stochastic"),
                   # older checkpoints did not say; their residuals fit either setting
                   "error_feedback": state.get("error_feedback", self.error_feedback)}
        for key, value in written.items():
            this = getattr(self, key)
            if value != this:
                raise ValueError(
                    f"the checkpoint was written with {key}={value}, this run has "
                    f"{key}={this}; resume with the same setting")
        self.tracker.load_state_dict(state["tracker"])
        self.policy.load_state_dict(state["policy"])
        if self.memory is not None:
            self.memory.load_state_dict({"residuals": state["residuals"]})
        self.step = int(state["step"])
        self.tier_counts = {int(i): Counter(c) for i, c in state["tier_counts"].items()}
        self.plan = list(state.get("plan", []))
        self._planned = {e["bucket"]: e["tier"] for e in self.plan if "tier" in e}
        self.ahead.load_state_dict(state.get("ahead_maxima", {}))
        self.layouts.clear()
        self.decisions.clear()

    def __getstate__(self) -> dict[str, Any]:
        raise TypeError(
            "CompactionState holds a process group and cannot be pickled; save "
            "state.state_dict() and restore it with load_state_dict()"
        )
