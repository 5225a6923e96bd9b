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
   - ``packed``: the same codes in carry-free lanes of int32 words, all-reduce SUM
     (k x ceil(log2(2N+1)) / 8 bytes: k / 2 for N <= 7).
4. On completion scatter the averaged entries back into a zeroed bucket (pruned entries
   are exactly zero) and return the bucket buffer.
5. On the last bucket, close the step of the payload counter.

What is counted as payload: the bytes of every tensor handed to a collective, per rank,
before the ring factor 2(N-1)/N.

Warnings:
- Register before the first iteration (:func:`pactrain.methods.attach`).
- Under ``no_sync()`` DDP skips the hook; gradients accumulate locally and the hook sees
  their sum on the next synchronized backward, which is what it compacts.
- Hook annotations are checked by DDP at runtime, hence no ``from __future__ import
  annotations`` in this module.
"""

import itertools
import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist

from pactrain.accounting import PayloadCounter
from pactrain.masks import MaskTracker
from pactrain.policy import AdaptivePolicy, FixedPolicy, TierDecision
from pactrain.tiers import (
    LOSSY_TIERS,
    LOW_PRECISION,
    MAX_TERNARY_WORLD_SIZE,
    TIERS,
    ErrorFeedback,
    LanePacking,
    ternary_codes,
)

LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class BucketLayout:
    """Which flat positions of one bucket survive the masks.

    Attributes:
        key: (bucket index, bucket size, parameter ids, mask_version): the cache key.
        numel: entries in the bucket.
        kept: int64 flat positions of unpruned entries, ascending.
        flat_mask: bool mask over the whole bucket (True = kept).
        slots: (canonical parameter name, offset, numel) of each parameter, bucket order.
        kept_per_slot: kept entries of each slot (sizes of the per-parameter draws).
        slot_ids: canonical index of each slot's parameter (seeds its ternary draws).
        bounds: (start, end) of each slot in the compacted buffer.
    """

    key: tuple
    numel: int
    kept: torch.Tensor
    flat_mask: torch.Tensor
    slots: tuple[tuple[str, int, int], ...] = ()
    kept_per_slot: tuple[int, ...] = ()
    slot_ids: tuple[int, ...] = ()
    bounds: tuple[tuple[int, int], ...] = ()


def build_layout(bucket: dist.GradBucket, masks: dict[int, torch.Tensor], key: tuple,
                 names: dict[int, tuple[int, str]]) -> BucketLayout:
    """Lay the parameters' masks out in bucket order (offsets read from the grad views).

    ``names`` maps ``id(param)`` to its canonical (index, name) in the model, which keys
    per-parameter state that must survive a change of bucket layout.
    """
    buffer = bucket.buffer()
    flat = torch.ones(buffer.numel(), dtype=torch.bool, device=buffer.device)
    base = buffer.data_ptr()
    slots, kept_per_slot, slot_ids = [], [], []
    for position, (param, grad) in enumerate(
            zip(bucket.parameters(), bucket.gradients(), strict=True)):
        offset = (grad.data_ptr() - base) // grad.element_size()
        if offset < 0 or offset + grad.numel() > buffer.numel():
            raise RuntimeError(
                f"gradient of a parameter is not a view of bucket {bucket.index()}'s buffer; "
                "this DDP version lays buckets out differently, which PacTrain does not support"
            )
        fallback = (-1 - position, f"bucket{bucket.index()}.{position}")
        canonical, name = names.get(id(param), fallback)
        mask = masks.get(id(param))
        if mask is not None:
            flat[offset:offset + grad.numel()] = mask.reshape(-1).to(flat.device)
        slots.append((name, offset, grad.numel()))
        kept_per_slot.append(grad.numel() if mask is None else int(mask.sum()))
        slot_ids.append(canonical)
    return BucketLayout(key, buffer.numel(), flat.nonzero().squeeze(1), flat,
                        tuple(slots), tuple(kept_per_slot), tuple(slot_ids),
                        _bounds(kept_per_slot))


def _bounds(lengths: list[int]) -> tuple[tuple[int, int], ...]:
    """(start, end) of consecutive segments of the given lengths."""
    ends = list(itertools.accumulate(lengths))
    return tuple(zip([0, *ends[:-1]], ends, strict=True))


def slot_abs_max(values: torch.Tensor, bounds: tuple[tuple[int, int], ...]) -> torch.Tensor:
    """``max |v|`` of each slot of a compacted buffer (0 for an empty slot).

    Why not ``segment_reduce(values.abs(), "max", ...)``: on resnet18's 2.3 M kept entries
    that took 10 ms per step (an ``abs`` copy plus a slow generic kernel); one
    ``aminmax`` per slot reads each entry once and allocates nothing: under 1 ms.
    """
    out = torch.zeros(len(bounds), dtype=values.dtype, device=values.device)
    for slot, (start, end) in enumerate(bounds):
        if end > start:
            low, high = torch.aminmax(values[start:end])
            out[slot] = torch.maximum(high, low.neg())
    return out


def scale_slots(tensor: torch.Tensor, factors: torch.Tensor,
                bounds: tuple[tuple[int, int], ...]) -> torch.Tensor:
    """Multiply each slot of a compacted buffer in place by its factor; returns it.

    Why a loop over slots: it is over parameters (tens), each iteration one vectorised
    multiply of a view by a 0-d tensor (no sync); expanding the factors to one per entry
    (``repeat_interleave``) would cost an extra allocation and pass over the kept entries.
    """
    for (start, end), factor in zip(bounds, factors, strict=True):
        tensor[start:end].mul_(factor)
    return tensor


class CompactionState:
    """Everything :func:`compaction_hook` carries between calls (one per rank).

    Args:
        process_group: the group (``None``: default group).
        tracker: the mask tracker (masks and ``mask_version``).
        world_size, rank, seed: the group's size, this rank, the run seed (seeds the
            per-rank generator of ternary draws).
        policy: :class:`FixedPolicy` or :class:`AdaptivePolicy`.
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
    ) -> None:
        if isinstance(policy, FixedPolicy) and policy.tier not in TIERS:
            raise ValueError(f"unknown tier {policy.tier!r}; choose one of {TIERS}")
        if world_size > MAX_TERNARY_WORLD_SIZE:
            if isinstance(policy, FixedPolicy) and policy.tier == "ternary":
                raise ValueError(
                    f"the ternary tier sums int8 codes, which overflows above "
                    f"{MAX_TERNARY_WORLD_SIZE} workers (world size {world_size}); use "
                    "pactrain-fp16 or the adaptive pactrain method"
                )
            if isinstance(policy, AdaptivePolicy) and "ternary" in policy.allowed:
                LOG.warning("world size %d > %d: the adaptive policy will not use ternary",
                            world_size, MAX_TERNARY_WORLD_SIZE)
                policy.allowed = tuple(t for t in policy.allowed if t != "ternary")
        self.process_group = process_group
        self.scale_group = scale_group if scale_group is not None else process_group
        self.tracker = tracker
        self.world_size = world_size
        self.rank = rank
        self.seed = seed
        self.policy = policy
        self.error_feedback = ErrorFeedback() if error_feedback else None
        self.packing = LanePacking.for_world(world_size)
        self.step = 0  # synchronized steps seen (seeds the ternary draws)
        self.payload = PayloadCounter()
        self.tier_counts: dict[int, Counter] = {}
        self.comm_seconds = 0.0
        self.layouts: dict[int, BucketLayout] = {}
        self.decisions: dict[int, tuple[tuple, int, TierDecision]] = {}
        self._draws: dict[int, torch.Tensor] = {}  # per bucket index, reused every step
        self._gathered: dict[int, torch.Tensor] = {}  # likewise
        self._mask_names = {id(p): name for name, p in tracker.pruner.params.items()}
        named = model.named_parameters() if model is not None else tracker.pruner.params.items()
        self._canonical = {id(p): (i, name) for i, (name, p) in enumerate(named)}

    # -- caches --------------------------------------------------------------------------
    def layout(self, bucket: dist.GradBucket) -> BucketLayout:
        """The bucket's cached layout, rebuilt when its key changes."""
        params = bucket.parameters()
        key = (bucket.index(), bucket.buffer().numel(), tuple(id(p) for p in params),
               self.tracker.mask_version)
        cached = self.layouts.get(bucket.index())
        if cached is not None and cached.key == key:
            return cached
        masks = {pid: self.tracker.pruner.masks[name]
                 for pid, name in self._mask_names.items()}
        layout = build_layout(bucket, masks, key, self._canonical)
        self.layouts[bucket.index()] = layout
        if self.error_feedback is not None:
            if cached is not None and cached.slots != layout.slots:
                # DDP rebuilt its buckets: move residuals to the parameters' new places
                self.error_feedback.release((bucket.index(), cached.numel), cached.slots)
            self.error_feedback.materialize((bucket.index(), layout.numel), layout.slots)
        return layout

    def uniform_draws(self, index: int, layout: BucketLayout) -> torch.Tensor:
        """U[0,1) per kept entry, drawn per parameter from a generator seeded by (seed,
        rank, step, parameter): the same numbers reach the same weights whatever the
        bucket layout, which keeps a resumed run identical to an uninterrupted one.

        Each parameter's draws are written in place into one buffer per bucket (reused
        every step and valid until the next call for that bucket): seeding a generator
        costs microseconds, the concatenation of per-parameter tensors it replaces cost
        a full extra pass over the kept entries. The numbers are those of
        ``torch.rand(count, generator=...)`` per parameter, as before.
        """
        total = int(layout.kept.numel())
        out = self._draws.get(index)
        if out is None or out.numel() != total:
            out = torch.empty(total, dtype=torch.float32)
            self._draws[index] = out
        mixed = ((self.seed * 1_000_003 + self.rank) * 1_000_033 + self.step) * 4099
        offset = 0
        for canonical, count in zip(layout.slot_ids, layout.kept_per_slot, strict=True):
            generator = torch.Generator().manual_seed((mixed + canonical) % (2 ** 63))
            out[offset:offset + count].uniform_(generator=generator)
            offset += count
        return out

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
        """The bucket's tier, recomputed when the layout or the policy changes."""
        cached = self.decisions.get(index)
        if cached is not None and cached[0] == layout.key and cached[1] == self.policy.version:
            return cached[2]
        decision = self.policy.decide(layout.numel, int(layout.kept.numel()), self.world_size)
        previous = cached[2].tier if cached else None
        if decision.tier != previous:
            LOG.info("bucket %d: %d of %d entries kept (density %.3f) -> %s %s", index,
                     decision.kept, decision.numel, decision.density, decision.tier,
                     {k: f"{v:.2e}s" for k, v in decision.costs.items()})
        self.decisions[index] = (layout.key, self.policy.version, decision)
        return decision

    # -- the communicator ----------------------------------------------------------------
    def all_reduce(self, tensor: torch.Tensor, name: str = "all_reduce",
                   op: Any = dist.ReduceOp.SUM, group: Any = None) -> torch.futures.Future:
        """Launch one async all-reduce, count its payload and time it to completion."""
        nbytes = tensor.numel() * tensor.element_size()
        self.payload.add(nbytes, name)
        start = time.perf_counter()
        group = group if group is not None else self.process_group
        future = dist.all_reduce(tensor, op=op, group=group, async_op=True).get_future()

        def record(_: torch.futures.Future) -> None:
            seconds = time.perf_counter() - start
            self.comm_seconds += seconds
            self.policy.observe(nbytes, seconds)

        future.add_done_callback(record)
        return future

    # -- checkpoint ----------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Masks, mask version, schedule position, residuals, link model, step counter."""
        return {
            "tracker": self.tracker.state_dict(),
            "policy": self.policy.state_dict(),
            "residuals": self.error_feedback.state_dict(
                {(i, lay.numel): lay.slots for i, lay in self.layouts.items()})
            if self.error_feedback else {},
            "step": self.step,
            "tier_counts": {i: dict(c) for i, c in self.tier_counts.items()},
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`; caches are rebuilt on the next call."""
        self.tracker.load_state_dict(state["tracker"])
        self.policy.load_state_dict(state["policy"])
        if self.error_feedback is not None:
            self.error_feedback.load_state_dict(state["residuals"])
        self.step = int(state["step"])
        self.tier_counts = {int(i): Counter(c) for i, c in state["tier_counts"].items()}
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


def _compensate(state: CompactionState, key: tuple[int, int], layout: BucketLayout,
                values: torch.Tensor, tier: str) -> torch.Tensor:
    """Add a stored residual; lossless tiers deliver it and drop it."""
    if state.error_feedback is None:
        return values
    values = state.error_feedback.compensate(key, layout.kept, values)
    if tier not in LOSSY_TIERS:
        state.error_feedback.drop(key)
    return values


def send_dense(state: CompactionState, key: tuple[int, int], buffer: torch.Tensor,
               layout: BucketLayout) -> torch.futures.Future:
    """Whole bucket in fp32, pruned entries zeroed (cheapest when little is pruned)."""
    if state.error_feedback is not None and key in state.error_feedback.residuals:
        buffer.index_add_(0, layout.kept,
                          state.error_feedback.residuals.pop(key).index_select(0, layout.kept))
    buffer.mul_(layout.flat_mask).div_(state.world_size)
    return state.all_reduce(buffer).then(lambda f: f.value()[0])


def send_fp32(state: CompactionState, key: tuple[int, int], buffer: torch.Tensor,
              layout: BucketLayout) -> torch.futures.Future:
    """Kept entries only, fp32: exactly the dense average of the masked gradient."""
    values = _compensate(state, key, layout, state.gather(key[0], buffer, layout), "fp32")
    values.div_(state.world_size)
    return state.all_reduce(values).then(_scatter_back(buffer, layout.kept))


def _send_low_precision(tier: str) -> Callable[..., torch.futures.Future]:
    dtype = LOW_PRECISION[tier]

    def send(state: CompactionState, key: tuple[int, int], buffer: torch.Tensor,
             layout: BucketLayout) -> torch.futures.Future:
        values = _compensate(state, key, layout, buffer.index_select(0, layout.kept), tier)
        sent = (values / state.world_size).to(dtype)
        if state.error_feedback is not None:
            delivered = sent.to(torch.float32) * state.world_size
            state.error_feedback.store(key, layout.numel, layout.kept, values - delivered)
        return state.all_reduce(sent).then(_scatter_back(buffer, layout.kept))

    send.__name__ = f"send_{tier}"
    send.__doc__ = f"Kept entries divided by N, cast to {tier} (2 bytes each)."
    return send


def _ternary_codes(state: CompactionState, key: tuple[int, int], buffer: torch.Tensor,
                   layout: BucketLayout) -> tuple[torch.Tensor, torch.Tensor]:
    """Stochastic ternary codes of the kept entries under one group-wide MAX scale per
    parameter, and the per-parameter decode factors ``scale / N``.

    The scales (4 bytes per parameter) are all-reduced and waited for here, so every rank
    issues its collectives in bucket order. Cost per step is a handful of passes over the
    k kept entries and no Python work per entry: per-parameter scales are one
    ``aminmax`` per slot (:func:`slot_abs_max`); the draws become thresholds
    ``u * scale`` in place (:func:`scale_slots`), and codes are ``sign(v)`` where
    ``|v| > u * scale`` (:func:`pactrain.tiers.ternary_codes`: the same rule as
    :func:`pactrain.tiers.ternary_encode`, whose scale is never 0 here unless the
    parameter's values are); the error-feedback residual is formed in place.
    """
    values = _compensate(state, key, layout, state.gather(key[0], buffer, layout), "ternary")
    uniform = state.uniform_draws(key[0], layout)
    scales = slot_abs_max(values, layout.bounds)
    state.all_reduce(scales, "all_reduce_max", dist.ReduceOp.MAX, state.scale_group).wait()
    codes = ternary_codes(values, scale_slots(uniform, scales, layout.bounds))
    if state.error_feedback is not None:
        # what this rank meant minus what its codes deliver, computed in place
        values.sub_(scale_slots(codes.to(torch.float32), scales, layout.bounds))
        state.error_feedback.store(key, layout.numel, layout.kept, values)
    return codes, scales / state.world_size


def _decode_sums(buffer: torch.Tensor, layout: BucketLayout, factors: torch.Tensor,
                 sums: Callable[[torch.futures.Future], torch.Tensor],
                 ) -> Callable[[torch.futures.Future], torch.Tensor]:
    """Completion of a ternary all-reduce: average = sum of codes x scale / N, per
    parameter, scattered into the zeroed bucket."""
    def decode(future: torch.futures.Future) -> torch.Tensor:
        averaged = scale_slots(sums(future).to(torch.float32), factors, layout.bounds)
        buffer.zero_()
        buffer.index_copy_(0, layout.kept, averaged)
        return buffer
    return decode


def send_ternary(state: CompactionState, key: tuple[int, int], buffer: torch.Tensor,
                 layout: BucketLayout) -> torch.futures.Future:
    """Ternary codes (:func:`_ternary_codes`) summed as int8: 1 byte per kept entry."""
    codes, factors = _ternary_codes(state, key, buffer, layout)
    return state.all_reduce(codes).then(
        _decode_sums(buffer, layout, factors, lambda f: f.value()[0]))


def send_packed(state: CompactionState, key: tuple[int, int], buffer: torch.Tensor,
                layout: BucketLayout) -> torch.futures.Future:
    """The same ternary codes as :func:`send_ternary`, packed into carry-free lanes of
    int32 words (:class:`pactrain.tiers.LanePacking`) and summed by the ordinary int32
    all-reduce: ``ceil(log2(2N+1))`` bits per kept entry (0.5 B for N <= 7). Decodes to
    exactly what :func:`send_ternary` delivers for the same draws."""
    codes, factors = _ternary_codes(state, key, buffer, layout)
    packing = state.packing
    count = codes.numel()
    return state.all_reduce(packing.pack(codes), "all_reduce_packed").then(
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
    layout = state.layout(bucket)
    tier = state.decide(index, layout).tier
    state.tier_counts.setdefault(index, Counter())[tier] += 1
    future = TIER_SENDERS[tier](state, (index, layout.numel), buffer, layout)
    if bucket.is_last():
        state.payload.end_step()
        state.step += 1
    return future
