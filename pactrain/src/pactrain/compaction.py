"""The compaction hook: all-reduce only the unpruned entries of each DDP bucket.

Every rank holds the same masks (:class:`pactrain.masks.MaskTracker`), so every rank knows
which entries of a bucket can be non-zero. Gathering them into a short dense buffer gives
buffers of equal length and order on all ranks: they can be summed by the ordinary
all-reduce, and no indices travel. The traffic is density x dense traffic, the ideal.

Algorithm of :func:`compaction_hook` for one bucket:

1. Look up the bucket's layout (kept flat positions, cached per bucket index, bucket size,
   parameters and ``mask_version``; DDP rebuilds its buckets after the first iteration,
   so the key is checked on every call and the layout rebuilt when it changes).
2. Look up the bucket's tier (forced, or the adaptive policy's decision, cached per layout
   and policy version); count it.
3. Send with that tier (each a named function in :data:`TIER_SENDERS`):
   - ``dense``: zero pruned entries, divide by N, all-reduce the whole bucket (fp32);
   - ``fp32``: gather kept entries, divide by N, all-reduce them (k x 4 bytes);
   - ``fp16``/``bf16``: as fp32 but cast after dividing (k x 2 bytes);
   - ``ternary``: gather kept entries (+ error-feedback residual), all-reduce MAX of each
     parameter's local max |v| (4 bytes per parameter, waited for in the hook so every
     rank issues its collectives in bucket order), stochastic int8 codes, all-reduce SUM
     of the codes (k bytes);
   - ``packed``: the same codes as carry-free base-(2N+1) digits of int32 words,
     all-reduce SUM (4 bytes per ``digits`` codes: 0.4 k bytes at N = 4).
4. On completion scatter the averaged entries back into a zeroed bucket (pruned entries
   are exactly zero) and return the bucket buffer.
5. On the last bucket, close the step of the payload counter.

Roles (GRACE, :mod:`pactrain.compression`): the codes, their packing, per-parameter scales
and draws are pure compressors; residuals of lossy tiers live in a
:class:`~pactrain.compression.memory.ResidualMemory` keyed by parameter name; every
collective goes through the state's :class:`~pactrain.compression.communicator.Communicator`,
which counts the payload (the bytes of every tensor handed to a collective, per rank,
before the ring factor 2(N-1)/N), times it and tells the policy.

Warnings:
- Register before the first iteration (:func:`pactrain.methods.attach`).
- Under ``no_sync()`` DDP skips the hook; gradients accumulate locally and the hook sees
  their sum on the next synchronized backward, which is what it compacts.
- Hook annotations are checked by DDP at runtime, hence no ``from __future__ import
  annotations`` in this module.
"""

import logging
import statistics
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist

from pactrain.accounting import PayloadCounter
from pactrain.compression.communicator import Communicator, agree_scales
from pactrain.compression.compressors import (
    LOSSY_TIERS,
    LOW_PRECISION,
    MAX_TERNARY_WORLD_SIZE,
    TIERS,
    Bounds,
    RadixPacking,
    check_int8_sum,
    chunk_abs_max,
    scale_chunks,
    segment_bounds,
    ternary_codes,
    uniform_draws,
)
from pactrain.compression.memory import BucketSlot, ParameterNames, ResidualMemory
from pactrain.masks import MaskTracker
from pactrain.policy import AdaptivePolicy, FixedPolicy, TierDecision

LOG = logging.getLogger(__name__)

#: Steps of bucket gaps kept for the overlap plan (their median is used).
GAP_SAMPLES = 4


@dataclass(frozen=True)
class BucketLayout:
    """Which flat positions of one bucket survive the masks.

    Attributes:
        key: (bucket index, bucket size, parameter ids, mask_version): the cache key.
        numel: entries in the bucket.
        kept: int64 flat positions of unpruned entries, ascending.
        flat_mask: bool mask over the whole bucket (True = kept).
        slots: each parameter's canonical name and index and its place in the bucket,
            bucket order (the key of its residual; the index seeds its ternary draws).
        kept_per_slot: kept entries of each slot (sizes of the per-parameter draws).
        bounds: (start, end) of each slot in the compacted buffer.
    """

    key: tuple
    numel: int
    kept: torch.Tensor
    flat_mask: torch.Tensor
    slots: tuple[BucketSlot, ...] = ()
    kept_per_slot: tuple[int, ...] = ()
    bounds: Bounds = ()


def build_layout(bucket: dist.GradBucket, masks: dict[int, torch.Tensor], key: tuple,
                 names: ParameterNames) -> BucketLayout:
    """Lay the parameters' masks out in bucket order (offsets read from the grad views).

    ``names`` gives each parameter its canonical (index, name) in the model, which keys
    per-parameter state that must survive a change of bucket layout; a parameter it does
    not know is named by its place in the bucket.
    """
    buffer = bucket.buffer()
    flat = torch.ones(buffer.numel(), dtype=torch.bool, device=buffer.device)
    base = buffer.data_ptr()
    slots, kept_per_slot, expected = [], [], 0
    for position, (param, grad) in enumerate(
            zip(bucket.parameters(), bucket.gradients(), strict=True)):
        offset = (grad.data_ptr() - base) // grad.element_size()
        if offset != expected or offset + grad.numel() > buffer.numel():
            raise RuntimeError(
                f"gradient of a parameter is not the next slice of bucket {bucket.index()}'s "
                "buffer; this DDP version lays buckets out differently, which PacTrain does "
                "not support"
            )
        expected += grad.numel()
        canonical, name = names.find(param) or (-1 - position,
                                                f"bucket{bucket.index()}.{position}")
        mask = masks.get(id(param))
        if mask is not None:
            flat[offset:offset + grad.numel()] = mask.reshape(-1).to(flat.device)
        slots.append(BucketSlot(name, canonical, offset, grad.numel(), tuple(param.shape)))
        kept_per_slot.append(grad.numel() if mask is None else int(mask.sum()))
    return BucketLayout(key, buffer.numel(), flat.nonzero().squeeze(1), flat,
                        tuple(slots), tuple(kept_per_slot), segment_bounds(kept_per_slot))


class CompactionState:
    """Everything :func:`compaction_hook` carries between calls (one per rank).

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

    Raises:
        ValueError: world size above 127 with the ternary tier forced.
    """

    def __init__(
        self, process_group: Any, tracker: MaskTracker, world_size: int, rank: int,
        seed: int, policy: FixedPolicy | AdaptivePolicy, error_feedback: bool = True,
        model: torch.nn.Module | None = None, scale_group: Any = None,
        comm: Communicator | None = None,
    ) -> None:
        if isinstance(policy, FixedPolicy) and policy.tier not in TIERS:
            raise ValueError(f"unknown tier {policy.tier!r}; choose one of {TIERS}")
        if world_size > MAX_TERNARY_WORLD_SIZE:
            if isinstance(policy, FixedPolicy) and policy.tier == "ternary":
                check_int8_sum(world_size, "use pactrain-fp16 or the adaptive pactrain method")
            if isinstance(policy, AdaptivePolicy) and "ternary" in policy.allowed:
                LOG.warning("world size %d > %d: the adaptive policy will not use ternary",
                            world_size, MAX_TERNARY_WORLD_SIZE)
                policy.allowed = tuple(t for t in policy.allowed if t != "ternary")
        self.comm = comm or Communicator(process_group, observer=policy.observe)
        self.scale_group = scale_group if scale_group is not None else process_group
        self.tracker = tracker
        self.world_size = world_size
        self.rank = rank
        self.seed = seed
        self.policy = policy
        self.memory = ResidualMemory() if error_feedback else None
        self.packing = RadixPacking.for_world(world_size)
        self.step = 0  # synchronized steps seen (seeds the ternary draws)
        self.tier_counts: dict[int, Counter] = {}
        self.plan: list[dict[str, Any]] = []
        """The tiers taken, as a replayable plan (:mod:`pactrain.plan`)."""
        self._planned: dict[int, str] = {}
        self.layouts: dict[int, BucketLayout] = {}
        self.decisions: dict[int, tuple[tuple, int, TierDecision]] = {}
        self._draws: dict[int, torch.Tensor] = {}  # per bucket index, reused every step
        self._ready_at: list[tuple[int, float]] = []  # this step's hook calls (index, time)
        self.gap_samples: dict[int, deque[float]] = {}  # recent gaps per bucket index
        self._gathered: dict[int, torch.Tensor] = {}  # likewise
        self._mask_names = {id(p): name for name, p in tracker.pruner.params.items()}
        self._names = (ParameterNames(model) if model is not None
                       else ParameterNames.of(tracker.pruner.params.items()))

    @property
    def process_group(self) -> Any:
        return self.comm.process_group

    @property
    def payload(self) -> PayloadCounter:
        return self.comm.payload

    # -- caches --------------------------------------------------------------------------
    def layout(self, bucket: dist.GradBucket) -> BucketLayout:
        """The bucket's cached layout, rebuilt when its key changes (the residuals follow
        their parameters by name, :class:`~pactrain.compression.memory.ResidualMemory`)."""
        params = bucket.parameters()
        key = (bucket.index(), bucket.buffer().numel(), tuple(id(p) for p in params),
               self.tracker.mask_version)
        cached = self.layouts.get(bucket.index())
        if cached is not None and cached.key == key:
            return cached
        masks = {pid: self.tracker.pruner.masks[name]
                 for pid, name in self._mask_names.items()}
        layout = build_layout(bucket, masks, key, self._names)
        self.layouts[bucket.index()] = layout
        return layout

    def uniform_draws(self, index: int, layout: BucketLayout) -> torch.Tensor:
        """U[0,1) per kept entry, drawn per parameter
        (:func:`~pactrain.compression.compressors.uniform_draws`: seeded by seed, rank,
        step and parameter, so the same numbers reach the same weights whatever the bucket
        layout, which keeps a resumed run identical to an uninterrupted one), in one
        buffer per bucket reused every step (valid until the next call for that bucket).
        """
        total = int(layout.kept.numel())
        out = self._draws.get(index)
        if out is None or out.numel() != total:
            # CPU generators give the same numbers on every device; pinned for the copy
            out = torch.empty(total, dtype=torch.float32,
                              pin_memory=layout.kept.is_cuda)
            self._draws[index] = out
        draws = uniform_draws(out, self.seed, self.rank, self.step,
                              [slot.index for slot in layout.slots], layout.kept_per_slot)
        return draws.to(layout.kept.device)  # blocking: the buffer is reused next step

    def gather(self, index: int, bucket: torch.Tensor, layout: BucketLayout) -> torch.Tensor:
        """The kept entries of ``bucket``, in a buffer reused every step for this bucket
        index (valid until the next call for it; DDP completes a bucket's future before
        the next step's hook for it runs). Why reuse: a fresh 9 MB tensor per step costs
        its page faults again (resnet18 at 80%: 7.6 ms fresh, 3.9 ms reused)."""
        count = int(layout.kept.numel())
        out = self._gathered.get(index)
        if out is None or out.numel() != count or out.dtype != bucket.dtype:
            out = torch.empty(count, dtype=bucket.dtype, device=bucket.device)
            self._gathered[index] = out
        return torch.index_select(bucket, 0, layout.kept, out=out)

    def decide(self, index: int, layout: BucketLayout) -> TierDecision:
        """The bucket's tier, recomputed when the layout or the policy changes (a replayed
        plan, :class:`pactrain.plan.ReplayPolicy`, says it per step)."""
        tier_at = getattr(self.policy, "tier_at", None)
        if tier_at is not None:
            return TierDecision(tier_at(self.step, index), layout.numel,
                                int(layout.kept.numel()), {})
        cached = self.decisions.get(index)
        if cached is not None and cached[0] == layout.key and cached[1] == self.policy.version:
            return cached[2]
        budget = self.policy.hide_budget(index)
        decision = self.policy.decide(layout.numel, int(layout.kept.numel()), self.world_size,
                                      budget)
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
    def note_ready(self, index: int) -> None:
        """Record when bucket ``index`` reached the hook (its gradients were ready)."""
        self._ready_at.append((index, time.perf_counter()))

    def close_step_timing(self) -> None:
        """Turn this step's hook calls into gaps: each bucket's time until the next
        bucket's call (the compute its transfer can hide behind); 0 for the last. A few
        steps are kept per bucket (their median is what the policy plans with)."""
        calls, self._ready_at = self._ready_at, []
        for position, (index, at) in enumerate(calls):
            gap = calls[position + 1][1] - at if position + 1 < len(calls) else 0.0
            self.gap_samples.setdefault(index, deque(maxlen=GAP_SAMPLES)).append(gap)

    def plan_overlap(self) -> None:
        """Give the policy each bucket's median recent gap (collective: all ranks call
        it at the same step). Only buckets of the latest layout take part."""
        current = set(self.layouts)
        gaps = {i: statistics.median(samples) for i, samples in self.gap_samples.items()
                if i in current and samples}
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
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`; caches are rebuilt on the next call."""
        self.tracker.load_state_dict(state["tracker"])
        self.policy.load_state_dict(state["policy"])
        if self.memory is not None:
            self.memory.load_state_dict({"residuals": state["residuals"]})
        self.step = int(state["step"])
        self.tier_counts = {int(i): Counter(c) for i, c in state["tier_counts"].items()}
        self.plan = list(state.get("plan", []))
        self._planned = {e["bucket"]: e["tier"] for e in self.plan}
        self.layouts.clear()
        self.decisions.clear()

    def __getstate__(self) -> dict[str, Any]:
        raise TypeError(
            "CompactionState holds a process group and cannot be pickled; save "
            "state.state_dict() and restore it with load_state_dict()"
        )


def _scatter_back(buffer: torch.Tensor, kept: torch.Tensor,
                  ) -> Callable[[torch.futures.Future], torch.Tensor]:
    def scatter(future: torch.futures.Future) -> torch.Tensor:
        values = future.value()[0]
        buffer.zero_()
        buffer.index_copy_(0, kept, values.to(buffer.dtype))
        return buffer
    return scatter


def _compensate(state: CompactionState, index: int, layout: BucketLayout,
                values: torch.Tensor, tier: str) -> torch.Tensor:
    """Add a stored residual; lossless tiers deliver it and drop it."""
    if state.memory is None:
        return values
    values = state.memory.compensate_kept(index, layout.slots, layout.kept, values)
    if tier not in LOSSY_TIERS:
        state.memory.drop_bucket(index)
    return values


def send_dense(state: CompactionState, index: int, buffer: torch.Tensor,
               layout: BucketLayout) -> torch.futures.Future:
    """Whole bucket in fp32, pruned entries zeroed (cheapest when little is pruned)."""
    if state.memory is not None:
        residual = state.memory.bucket_residual(index, layout.slots, buffer.device)
        if residual is not None:
            buffer.index_add_(0, layout.kept, residual.index_select(0, layout.kept))
            state.memory.drop_bucket(index)
    buffer.mul_(layout.flat_mask).div_(state.world_size)
    return state.comm.all_reduce(buffer).then(lambda f: f.value()[0])


def send_fp32(state: CompactionState, index: int, buffer: torch.Tensor,
              layout: BucketLayout) -> torch.futures.Future:
    """Kept entries only, fp32: exactly the dense average of the masked gradient."""
    values = _compensate(state, index, layout, state.gather(index, buffer, layout), "fp32")
    values.div_(state.world_size)
    return state.comm.all_reduce(values).then(_scatter_back(buffer, layout.kept))


def _send_low_precision(tier: str) -> Callable[..., torch.futures.Future]:
    dtype = LOW_PRECISION[tier]

    def send(state: CompactionState, index: int, buffer: torch.Tensor,
             layout: BucketLayout) -> torch.futures.Future:
        values = _compensate(state, index, layout, buffer.index_select(0, layout.kept), tier)
        sent = (values / state.world_size).to(dtype)
        if state.memory is not None:
            delivered = sent.to(torch.float32) * state.world_size
            state.memory.store_kept(index, layout.slots, layout.kept, values - delivered)
        return state.comm.all_reduce(sent).then(_scatter_back(buffer, layout.kept))

    send.__name__ = f"send_{tier}"
    send.__doc__ = f"Kept entries divided by N, cast to {tier} (2 bytes each)."
    return send


def _ternary_codes(state: CompactionState, index: int, buffer: torch.Tensor,
                   layout: BucketLayout) -> tuple[torch.Tensor, torch.Tensor]:
    """Stochastic ternary codes of the kept entries under one group-wide MAX scale per
    :data:`~pactrain.compression.compressors.SCALE_CHUNK` consecutive kept entries of each
    parameter, and the chunks' decode factors ``scale / N``.

    The scales (4 bytes per chunk) are all-reduced and waited for here, so every rank
    issues its collectives in bucket order. Cost per step is a handful of vectorised passes
    over the k kept entries and no Python work per entry or chunk: the scales are one
    ``aminmax`` over a (chunks, chunk) view per parameter
    (:func:`~pactrain.compression.compressors.chunk_abs_max`); the draws become
    thresholds ``u * scale`` in place
    (:func:`~pactrain.compression.compressors.scale_chunks`), and codes are ``sign(v)``
    where ``|v| > u * scale`` (:func:`~pactrain.compression.compressors.ternary_codes`;
    a chunk's scale is 0 only where all its values are, whose codes are then 0); the
    error-feedback residual is formed in place. Chunks restart at every parameter's kept
    entries, identical on every rank and in every bucket layout, so every rank agrees on
    which entries share a scale and a resumed run draws the same ones.
    """
    values = _compensate(state, index, layout, state.gather(index, buffer, layout), "ternary")
    uniform = state.uniform_draws(index, layout)
    scales = agree_scales(state.comm, chunk_abs_max(values, layout.bounds), state.scale_group)
    codes = ternary_codes(values, scale_chunks(uniform, scales, layout.bounds))
    if state.memory is not None:
        # what this rank meant minus what its codes deliver, computed in place
        values.sub_(scale_chunks(codes.to(torch.float32), scales, layout.bounds))
        state.memory.store_kept(index, layout.slots, layout.kept, values)
    return codes, scales / state.world_size


def _decode_sums(buffer: torch.Tensor, layout: BucketLayout, factors: torch.Tensor,
                 sums: Callable[[torch.futures.Future], torch.Tensor],
                 ) -> Callable[[torch.futures.Future], torch.Tensor]:
    """Completion of a ternary all-reduce: average = sum of codes x scale / N, per
    parameter, scattered into the zeroed bucket."""
    def decode(future: torch.futures.Future) -> torch.Tensor:
        averaged = scale_chunks(sums(future).to(torch.float32), factors, layout.bounds)
        buffer.zero_()
        buffer.index_copy_(0, layout.kept, averaged)
        return buffer
    return decode


def send_ternary(state: CompactionState, index: int, buffer: torch.Tensor,
                 layout: BucketLayout) -> torch.futures.Future:
    """Ternary codes (:func:`_ternary_codes`) summed as int8: 1 byte per kept entry."""
    codes, factors = _ternary_codes(state, index, buffer, layout)
    return state.comm.all_reduce(codes).then(
        _decode_sums(buffer, layout, factors, lambda f: f.value()[0]))


def send_packed(state: CompactionState, index: int, buffer: torch.Tensor,
                layout: BucketLayout) -> torch.futures.Future:
    """The same ternary codes as :func:`send_ternary`, packed as carry-free base-(2N+1)
    digits of int32 words (:class:`~pactrain.compression.compressors.RadixPacking`) and
    summed by the ordinary int32 all-reduce: 3.2 bits per kept entry at N = 4 (10 digits a
    word). Decodes to exactly what :func:`send_ternary` delivers for the same draws."""
    codes, factors = _ternary_codes(state, index, buffer, layout)
    packing = state.packing
    count = codes.numel()
    return state.comm.all_reduce(packing.pack(codes), "all_reduce_packed").then(
        _decode_sums(buffer, layout, factors, lambda f: packing.unpack(f.value()[0], count)))


#: One sender per tier (a table, not an if/elif chain).
TIER_SENDERS: dict[str, Callable[..., torch.futures.Future]] = {
    "dense": send_dense,
    "fp32": send_fp32,
    "fp16": _send_low_precision("fp16"),
    "bf16": _send_low_precision("bf16"),
    "ternary": send_ternary,
    "packed": send_packed,
}


def compaction_hook(state: CompactionState, bucket: dist.GradBucket,
                    ) -> torch.futures.Future[torch.Tensor]:
    """DDP communication hook of PacTrain (see the module docstring for the steps).

    Example::

        state = CompactionState(None, tracker, world_size, rank, seed, FixedPolicy("fp32"))
        ddp_model.register_comm_hook(state, compaction_hook)
    """
    buffer = bucket.buffer()
    index = bucket.index()
    state.note_ready(index)
    layout = state.layout(bucket)
    tier = state.decide(index, layout).tier
    state.tier_counts.setdefault(index, Counter())[tier] += 1
    state.record_plan(index, tier)
    future = TIER_SENDERS[tier](state, index, buffer, layout)
    if bucket.is_last():
        state.comm.end_step()
        state.close_step_timing()
        state.step += 1
    return future
