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
3. Send with that tier (its module in :mod:`pactrain.tiers`): ``dense``, the fallback,
   zeroes the pruned entries and all-reduces the whole bucket (:func:`send_whole_bucket`);
   every other tier gets the kept entries, gathered (+ error-feedback residual), and sends
   them its way (fp32, fp16/bf16, int8 ternary codes with chunk scales, or the same codes
   packed as carry-free base-(2N+1) digits of int32 words) (:func:`send_compacted`).
   With ``send_density`` the tier gets only this step's agreed sample of the kept entries
   (the same on every rank: by default each parameter's chunks of 256 kept entries with
   the largest group-wide max |v|, :meth:`CompactionState.top_chunks`, or every
   ``stride``-th entry in turn, :meth:`CompactionState.cyclic_sample`), and the residual
   keeps the rest. The hook never waits for the group's chunk maxima: it starts their MAX
   and an :class:`OrderedLauncher` sends the bucket once they are in, in bucket order
   (:func:`send_compacted`); with ``send_select="topk-ahead"`` they were agreed at the
   previous step and the bucket leaves from the hook (:func:`send_ahead`).
4. On completion scatter the averaged entries back into a zeroed bucket (pruned entries,
   and those not sent this step, are exactly zero) and return the bucket buffer.
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

import itertools
import logging
import math
import statistics
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist

from pactrain.accounting import PayloadCounter
from pactrain.ahead_maxima import AheadMaxima
from pactrain.compression.communicator import (
    Communicator,
    OrderedLauncher,
    agree_scales,
    start_agreement,
)
from pactrain.compression.compressors import (
    SCALE_CHUNK,
    Bounds,
    chunk_abs_max,
    chunk_count,
    segment_bounds,
    uniform_draws,
)
from pactrain.compression.memory import BucketSlot, ParameterNames, ResidualMemory
from pactrain.masks import MaskTracker
from pactrain.policy import AdaptivePolicy, FixedPolicy, TierDecision
from pactrain.tiers import TIER_NAMES, all_tiers
from pactrain.tiers.base import Sent, Tier, TierContext

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


#: How ``send_density`` picks the kept entries that travel: ``topk`` (agreed top chunks,
#: :meth:`CompactionState.top_chunks`), ``topk-ahead`` (the same pick from chunk maxima
#: agreed one step ahead, :func:`send_ahead`) or ``cyclic``
#: (:meth:`CompactionState.cyclic_sample`).
SEND_SELECTIONS: tuple[str, ...] = ("topk", "topk-ahead", "cyclic")

#: The selections that pick the top chunks.
TOP_CHUNK_SELECTIONS: tuple[str, ...] = ("topk", "topk-ahead")

#: How the ternary tiers round ``v / scale`` to a code: ``stochastic`` (sign(v) with
#: probability |v|/scale: unbiased, TernGrad's and QSGD's rule) or ``nearest`` (sign(v)
#: where |v| > scale/2: biased but contractive, so with error feedback what it rounds
#: away is sent later, as in EF-SGD, Karimireddy et al., ICML 2019).
ROUNDINGS: tuple[str, ...] = ("stochastic", "nearest")


@dataclass(frozen=True)
class ChunkTable:
    """A bucket layout's chunks of kept entries and what each parameter may send of them
    (:meth:`CompactionState.chunk_table`; cached per layout, whose key carries the mask
    version that the send ratio follows).

    Attributes:
        key: the layout's key.
        starts, lengths: start (in the kept buffer) and length of every chunk, slot after
            slot (int64; each slot's last chunk may be short).
        counts: chunks of each slot.
        budgets: chunks each slot may send per step (:meth:`CompactionState.chunk_budgets`).
    """

    key: tuple
    starts: torch.Tensor
    lengths: torch.Tensor
    counts: tuple[int, ...]
    budgets: tuple[int, ...]

    @property
    def sampled(self) -> bool:
        """Whether some slot has more chunks than it may send (else all are sent)."""
        return any(n > b for n, b in zip(self.counts, self.budgets, strict=True))


@dataclass(frozen=True)
class Sample:
    """One step's agreed sample of a bucket's kept entries (:meth:`CompactionState.sample`).

    Attributes:
        chosen: int64 positions of the entries sent, in the compacted (kept) buffer.
        positions: their flat positions in the bucket.
        per_slot: entries sent of each parameter, bucket order.
        bounds: (start, end) of each parameter's entries in the buffer sent.
        scales: the group's MAX of |v| of each chunk sent, when the selection agreed on
            them (top chunks: they are the ternary scales of what is sent, since each
            parameter's chosen chunks are whole chunks in order, its last possibly short).
    """

    chosen: torch.Tensor
    positions: torch.Tensor
    per_slot: tuple[int, ...]
    bounds: Bounds
    scales: torch.Tensor | None = None


def check_send_density(send_density: float | None) -> None:
    """Refuse a ``send_density`` outside (0, 1] (the CLI calls it too, before any worker
    starts).

    Raises:
        ValueError: naming the bad value.
    """
    if send_density is not None and not 0.0 < send_density <= 1.0:
        raise ValueError(f"send_density must be in (0, 1], got {send_density}")


def check_rounding(rounding: str, error_feedback: bool | None = None) -> None:
    """Refuse an unknown ternary ``rounding``, and ``nearest`` with error feedback
    explicitly off (``False``; ``None`` is the default, which turns it on). The CLI calls
    it too, before any worker starts."""
    if rounding not in ROUNDINGS:
        raise ValueError(f"rounding must be one of {', '.join(ROUNDINGS)}, got {rounding!r}")
    if rounding == "nearest" and error_feedback is False:
        raise ValueError("nearest rounding keeps what it rounds away in the error-feedback "
                         "residual; drop --no-error-feedback (error_feedback=False)")


def check_send_select(send_select: str, error_feedback: bool | None = None) -> None:
    """Refuse an unknown ``send_select``, and ``topk-ahead`` with error feedback
    explicitly off (the CLI calls it too).

    Raises:
        ValueError: naming the bad value and the choices, or the flag to drop.
    """
    if send_select not in SEND_SELECTIONS:
        raise ValueError(f"send_select must be one of {', '.join(SEND_SELECTIONS)}, "
                         f"got {send_select!r}")
    if send_select == "topk-ahead" and error_feedback is False:
        raise ValueError("topk-ahead codes with the scales agreed a step earlier and keeps "
                         "what they clip in the error-feedback residual; drop "
                         "--no-error-feedback (error_feedback=False)")


def sample_stride(numel: int, kept: int, send_density: float) -> int:
    """The smallest stride that sends at most ``send_density x numel`` of ``kept``
    entries (at least one entry a step)."""
    budget = max(1, int(send_density * numel))
    return max(1, -(-kept // budget))


def sample_phase(seed: int, parameter: int) -> int:
    """A parameter's offset in the sampling cycle (Knuth's multiplicative hash: spreads
    consecutive parameters, so they do not send the same share of their entries in step)."""
    return (parameter * 2654435761 + seed * 40503) % (2 ** 32)


def chunk_entries(starts: torch.Tensor, lengths: torch.Tensor,
                  chunk: int = SCALE_CHUNK) -> torch.Tensor:
    """The positions of the entries of chunks starting at ``starts`` with ``lengths``
    (each at most ``chunk``), chunk after chunk.

    Why this shape: a top-chunk sample is whole chunks but the last of a parameter, so
    the positions are one broadcast add, ``starts x 1 + arange(chunk)``, with the few
    short chunks' tails cut out by slicing (at most one a parameter); spelled per entry
    (a cumulative sum and two ``repeat_interleave`` over the entries sent) it took 8x
    longer, about 4 ms a step per worker on resnet18's 0.5 M entries sent.
    """
    flat = (starts.unsqueeze(1) + torch.arange(chunk, device=starts.device)).view(-1)
    short = (lengths < chunk).nonzero().flatten().tolist()
    if not short:
        return flat
    pieces, row = [], 0
    for short_row in short:
        pieces.append(flat[row * chunk:short_row * chunk + int(lengths[short_row])])
        row = short_row + 1
    pieces.append(flat[row * chunk:])
    return torch.cat(pieces)


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

        send_density: send at most this share of each bucket's entries per step
            (:meth:`sample`); ``None``: every kept entry every step. What is not sent
            waits in the residual whatever ``error_feedback`` says; ``error_feedback``
            decides only whether the lossy tiers' quantization error is kept too (the
            unsent entries' residual is delayed gradient; the PacTrain methods keep the
            codes' error by default when sampling, :func:`pactrain.methods.pactrain.make_pactrain`).
        send_select: how the sample is chosen (:data:`SEND_SELECTIONS`).
        rounding: how the ternary tiers round (:data:`ROUNDINGS`); ``nearest`` draws
            nothing and is refused with ``error_feedback=False`` (what it rounds away
            would be lost).

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
        send_select: str = "topk", rounding: str = "stochastic",
    ) -> None:
        self.tiers = all_tiers()
        if isinstance(policy, FixedPolicy):
            if policy.tier not in self.tiers:
                raise ValueError(f"unknown tier {policy.tier!r}; choose one of {TIER_NAMES}")
            forced = self.tiers[policy.tier]
            if not forced.serves(world_size):
                raise ValueError(
                    f"the {forced.name} tier serves at most {forced.max_world_size} workers "
                    f"({forced.limit_reason}; world size {world_size}); use "
                    "pactrain-packed, pactrain-fp16 or the adaptive pactrain method")
        if isinstance(policy, AdaptivePolicy):
            refused = [t for t in policy.allowed if not self.tiers[t].serves(world_size)]
            if refused:
                LOG.warning("world size %d: the adaptive policy will not use %s (it serves "
                            "fewer workers)", world_size, ", ".join(refused))
                policy.allowed = tuple(t for t in policy.allowed if t not in refused)
        check_send_density(send_density)
        check_send_select(send_select, error_feedback)
        check_rounding(rounding, error_feedback)
        self.send_select = send_select
        self.rounding = rounding
        self._chunk_tables: dict[int, ChunkTable] = {}
        self._send_ratio: tuple[int, float] | None = None
        self.send_density = send_density
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
        self.memory = ResidualMemory() if error_feedback or send_density is not None else None
        self.step = 0  # synchronized steps seen (seeds the ternary draws)
        self.gradients_masked = False
        """Every bucket of the latest backward went through this hook, so every pruned
        gradient entry is already zero (scattered into a zeroed bucket, or masked by the
        dense tier); :meth:`take_gradients_masked` reads and clears it."""
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
        self._copies: dict[int, torch.Tensor] = {}  # likewise (copy_of)
        self.launcher = OrderedLauncher()
        """Issues each bucket's codes once its agreed scales are in, in bucket order."""
        self.ahead = AheadMaxima()
        """``topk-ahead``: the chunk maxima agreed for the next step (:func:`send_ahead`)."""
        self._mask_names = {id(p): name for name, p in tracker.pruner.params.items()}
        self._names = (ParameterNames(model) if model is not None
                       else ParameterNames.of(tracker.pruner.params.items()))

    @property
    def process_group(self) -> Any:
        return self.comm.process_group

    def take_gradients_masked(self) -> bool:
        """Whether the gradients the optimizer is about to use came out of this hook (and
        so need no masking again), clearing the flag for the next step. Why: masking a
        gradient the hook already masked is a full pass over every pruned matrix per step
        (9.5% of a fashion-cnn worker's time in a py-spy profile, 4 workers on 2 cores),
        and changes nothing."""
        masked, self.gradients_masked = self.gradients_masked, False
        return masked

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

    def uniform_draws(self, index: int, slots: tuple[BucketSlot, ...],
                      per_slot: tuple[int, ...], device: torch.device,
                      step: int | None = None) -> torch.Tensor:
        """U[0,1) per entry sent, ``per_slot[i]`` of them for parameter ``slots[i]``,
        drawn per parameter (:func:`~pactrain.compression.compressors.uniform_draws`:
        seeded by seed, rank, step and parameter, so the same numbers reach the same
        weights whatever the bucket layout, which keeps a resumed run identical to an
        uninterrupted one), in one buffer per bucket reused every step (valid until the
        next call for that bucket). ``step``: the step the bucket belongs to (``None``:
        the current one; a launch that runs after the last bucket's hook passes its own).
        """
        total = sum(per_slot)
        out = self._draws.get(index)
        if out is None or out.numel() != total:
            # CPU generators give the same numbers on every device; pinned for the copy
            out = torch.empty(total, dtype=torch.float32, pin_memory=device.type == "cuda")
            self._draws[index] = out
        draws = uniform_draws(out, self.seed, self.rank, self.step if step is None else step,
                              [slot.index for slot in slots], per_slot)
        return draws.to(device)  # blocking: the buffer is reused next step

    def context(self, index: int, layout: BucketLayout, bounds: Bounds,
                per_slot: tuple[int, ...], scales: torch.Tensor | None = None,
                step: int | None = None) -> TierContext:
        """What a tier's send of bucket ``index`` needs (``bounds``/``per_slot``: the
        parameters' segments of the entries it sends; ``step``: the bucket's step, which
        seeds the draws, ``None``: the current one)."""
        if self.rounding == "nearest":
            def draws() -> torch.Tensor:
                return self.half_thresholds(index, sum(per_slot), layout.kept.device)
        else:
            def draws() -> torch.Tensor:
                return self.uniform_draws(index, layout.slots, per_slot, layout.kept.device,
                                          step)
        return TierContext(self.comm, self.world_size, self.scale_group, bounds,
                           draws=draws, wants_error=self.error_feedback, scales=scales)

    def half_thresholds(self, index: int, count: int, device: torch.device) -> torch.Tensor:
        """``count`` halves, where the draws would go: with them the ternary rule
        ``|v| > u x scale`` rounds to the nearest code (the buffer is reused per bucket;
        the tier scales it in place, so it is refilled every call)."""
        out = self._draws.get(index)
        if out is None or out.numel() != count or out.device != device:
            out = torch.empty(count, dtype=torch.float32, device=device)
            self._draws[index] = out
        return out.fill_(0.5)

    # -- agreed sampling -----------------------------------------------------------------
    def sent_estimate(self, layout: BucketLayout) -> int:
        """Entries of the bucket a compacting tier sends per step (what the policy prices)."""
        kept = int(layout.kept.numel())
        if self.send_density is None:
            return kept
        if self.send_select in TOP_CHUNK_SELECTIONS:
            return sum(min(end - start, budget * SCALE_CHUNK) for (start, end), budget
                       in zip(layout.bounds, self.chunk_table(layout).budgets, strict=True))
        return -(-kept // self.stride(layout))

    def stride(self, layout: BucketLayout) -> int:
        """Send every ``stride``-th kept entry of each parameter this step (1: all of
        them): the smallest stride that keeps the entries sent within ``send_density`` x
        the bucket's entries."""
        if self.send_density is None:
            return 1
        return sample_stride(layout.numel, int(layout.kept.numel()), self.send_density)

    def sample(self, layout: BucketLayout) -> Sample | None:
        """This step's sample when it needs no agreed maxima: ``cyclic``'s; ``None`` when
        not sampling, or for the top chunks, which the hook picks once the group's maxima
        are in (:meth:`top_chunks`, when :meth:`chunks_to_agree`)."""
        if self.send_density is None or self.send_select in TOP_CHUNK_SELECTIONS:
            return None
        return self.cyclic_sample(layout)

    def chunks_to_agree(self, layout: BucketLayout) -> bool:
        """Whether this step's sample needs the group's max |v| of every chunk of kept
        entries (top chunks, unless every parameter may send all of its chunks)."""
        if self.send_density is None or self.send_select not in TOP_CHUNK_SELECTIONS:
            return False
        return self.chunk_table(layout).sampled

    def send_ratio(self) -> float:
        """Share of its kept entries each parameter sends per step under ``send_density``:
        ``min(1, send_density / model density)``, so the whole model sends about
        ``send_density`` of its entries, and nothing is sampled once the mask keeps fewer.

        Why model-wide and not per parameter or per bucket: global pruning keeps unequal
        shares of each layer (a 10% budget per parameter went on capping the layers the
        ranking kept at 30-50% after the model reached 10%: fashion-cnn, 100 Mbit/s race,
        87.5% after 800 steps where the unsampled tier passed 88% at step 550); and the
        model's density, unlike a bucket's, does not depend on DDP's bucket layout, so a
        resumed run chooses the same entries. Cached per mask version.
        """
        assert self.send_density is not None
        version = self.tracker.mask_version
        if self._send_ratio is None or self._send_ratio[0] != version:
            density = self.tracker.pruner.model_density()
            self._send_ratio = (version, min(1.0, self.send_density / max(density, 1e-12)))
        return self._send_ratio[1]

    def chunk_budgets(self, layout: BucketLayout) -> list[int]:
        """Chunks of :data:`~pactrain.compression.compressors.SCALE_CHUNK` kept entries
        each parameter may send per step: :meth:`send_ratio` of its own (at least one)."""
        ratio = self.send_ratio()
        return [max(1, math.ceil(ratio * chunk_count(end - start)))
                for start, end in layout.bounds]

    def chunk_table(self, layout: BucketLayout) -> ChunkTable:
        """The layout's chunks and each parameter's budget of them, cached per layout (per
        bucket index; the hook asks for it twice a step, in :meth:`chunks_to_agree` and
        :meth:`top_chunks`)."""
        index = layout.key[0]
        cached = self._chunk_tables.get(index)
        if cached is not None and cached.key == layout.key:
            return cached
        starts, lengths = [], []
        for start, end in layout.bounds:
            for at in range(start, end, SCALE_CHUNK):
                starts.append(at)
                lengths.append(min(SCALE_CHUNK, end - at))
        device = layout.kept.device
        table = ChunkTable(
            layout.key, torch.tensor(starts, dtype=torch.int64, device=device),
            torch.tensor(lengths, dtype=torch.int64, device=device),
            tuple(chunk_count(end - start) for start, end in layout.bounds),
            tuple(self.chunk_budgets(layout)))
        self._chunk_tables[index] = table
        return table

    def top_chunks(self, layout: BucketLayout, agreed: torch.Tensor) -> Sample:
        """Agreed top-k inside the mask, by chunks: each parameter sends the
        :meth:`chunk_budgets` chunks of its kept entries with the largest group-wide max
        |v| (values with their residual), and the rest waits in the residual.

        Why chunks: the group agrees on one number per chunk of 256 kept entries (the
        MAX all-reduce the ternary tiers already make for their scales, 4 B per 256
        entries, waited for here), so every rank picks the same chunks and still no index
        travels; an entry's residual grows until its chunk's max wins, so none starves.
        Per entry agreement (ARC-Top-k, arXiv 2510.26709, agrees by a sketch) would cost
        more bytes than it saves at these densities. Cost per step: one pass of chunk
        maxima (as the ternary scales), one ``topk`` per parameter over its chunks (a few
        thousand), one broadcast add over the entries sent (:func:`chunk_entries`).
        ``agreed``: the group's MAX of every chunk's max |v| (the hook agrees on it,
        :func:`send_compacted`).
        """
        table = self.chunk_table(layout)
        device = layout.kept.device
        picked, rows, at = [], [], 0
        for n, budget in zip(table.counts, table.budgets, strict=True):
            if n <= budget:
                picked.append(torch.arange(at, at + n, device=device))
            else:
                top = torch.topk(agreed[at:at + n], budget, sorted=False).indices
                picked.append(torch.sort(top).values + at)
            rows.append(min(n, budget))
            at += n
        ids = torch.cat(picked)
        lengths = table.lengths[ids]
        chosen = chunk_entries(table.starts[ids], lengths)
        # entries sent of each parameter: the lengths of its picked chunks, summed (one
        # sync for all; a parameter with no kept entry picks no chunk)
        sums = torch.cat([lengths.new_zeros(1), lengths.cumsum(0)])
        ends = sums[torch.tensor([0, *itertools.accumulate(rows)], device=device)].tolist()
        per_slot = tuple(b - a for a, b in itertools.pairwise(ends))
        return Sample(chosen, layout.kept.index_select(0, chosen), per_slot,
                      segment_bounds(per_slot), agreed.index_select(0, ids))

    def cyclic_sample(self, layout: BucketLayout) -> Sample | None:
        """Agreed cyclic sampling of the bucket's kept entries (``None``: all of them).

        Every rank computes the same sample from the step count, the run seed and each
        parameter's index, so the compacted buffers still match and no index travels.
        Parameter ``p``'s kept entries ``j`` with ``j = (step + phase_p) mod stride`` are
        sent: every kept entry exactly once in every ``stride`` steps (what was not sent
        waits in the residual, at most ``stride - 1`` steps), parameters
        out of phase with each other. A function of (seed, step, parameter, mask) only, so
        a resumed run in another bucket layout sends the same entries. Cost per step: one
        ``arange`` per parameter and two index selects of the entries sent.
        """
        stride = self.stride(layout)
        if stride <= 1:
            return None
        device = layout.kept.device
        pieces, per_slot = [], []
        for slot, (start, end) in zip(layout.slots, layout.bounds, strict=True):
            first = start + (self.step + sample_phase(self.seed, slot.index)) % stride
            count = len(range(first, end, stride))
            per_slot.append(count)
            if count:
                pieces.append(torch.arange(first, end, stride, device=device))
        chosen = (torch.cat(pieces) if pieces
                  else torch.empty(0, dtype=torch.int64, device=device))
        return Sample(chosen, layout.kept.index_select(0, chosen), tuple(per_slot),
                      segment_bounds(per_slot))

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

    def copy_of(self, index: int, values: torch.Tensor) -> torch.Tensor:
        """A copy of ``values`` in a second buffer reused per bucket index (as
        :meth:`gather`'s, and valid as long)."""
        out = self._copies.get(index)
        if out is None or out.numel() != values.numel() or out.dtype != values.dtype:
            out = torch.empty_like(values)
            self._copies[index] = out
        return out.copy_(values)

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
        self._planned = {e["bucket"]: e["tier"] for e in self.plan}
        self.ahead.load_state_dict(state.get("ahead_maxima", {}))
        self.layouts.clear()
        self.decisions.clear()

    def __getstate__(self) -> dict[str, Any]:
        raise TypeError(
            "CompactionState holds a process group and cannot be pickled; save "
            "state.state_dict() and restore it with load_state_dict()"
        )


def send_ahead(state: CompactionState, index: int, tier: Tier, buffer: torch.Tensor,
               layout: BucketLayout) -> torch.futures.Future:
    """``topk-ahead``: the top-chunk sample and the codes' scales come from the chunk
    maxima the group agreed at the previous step, so nothing waits and every collective is
    issued from the hook (no :class:`OrderedLauncher`); then the MAX for the next step
    starts, behind the codes.

    Why: the MAX agreed now is a chain of small round trips, each queued behind the
    previous bucket's codes at the link's shaper: 50-160 ms per bucket at 10 Mbit/s
    (packed fashion-resnet18, 4 workers), on the step's critical path. Agreed a step
    ahead it travels while the step computes. The bucket's future is the codes' alone: the
    step does not wait for the next step's MAX either (it is waited for where it is used,
    :meth:`AheadMaxima.take`, by then long in); at the end of the backward pass that MAX
    would otherwise add the last bucket's 2(N-1) small hops to every step.

    What the next step's maxima are taken over: ``residual + gradient`` of this step, per
    chunk (the next step's values are the residual plus the next gradient, and the
    gradient of this step is its best guess). An entry above its chunk's scale codes as
    ±1 x scale and the residual keeps the excess (error feedback, which this selection
    requires). The first step, and a bucket whose mask changed, agree now and wait, once.
    """
    raw = state.gather(index, buffer, layout)  # stays: this step's gradient, see above
    values = state.copy_of(index, raw)
    assert state.memory is not None  # sampling always keeps a residual
    state.memory.compensate_kept(index, layout.slots, layout.kept, values)
    agreed = state.ahead.take(index, layout)
    if agreed is None:
        agreed = agree_scales(state.comm, chunk_abs_max(values, layout.bounds),
                              state.scale_group)
    step = state.step
    sample = state.top_chunks(layout, agreed) if state.chunks_to_agree(layout) else None
    sent, residual, positions = _send_share(state, index, tier, layout, values, sample,
                                            agreed, step)
    _keep_residual(state, index, layout, residual)
    if residual is not None:
        raw.add_(residual)
    state.ahead.remember(index, layout, start_agreement(
        state.comm, chunk_abs_max(raw, layout.bounds), state.scale_group))
    return sent.future.then(_scatter_back(buffer, positions))


def _scatter_back(buffer: torch.Tensor, positions: torch.Tensor,
                  ) -> Callable[[torch.futures.Future], torch.Tensor]:
    """Completion: the averaged entries (the future's value) into the zeroed bucket at
    ``positions`` (entries not sent this step, and pruned ones, are exactly zero)."""
    def scatter(future: torch.futures.Future) -> torch.Tensor:
        buffer.zero_()
        buffer.index_copy_(0, positions, future.value().to(buffer.dtype))
        return buffer
    return scatter


def _send_share(state: CompactionState, index: int, tier: Tier, layout: BucketLayout,
                values: torch.Tensor, sample: Sample | None, scales: torch.Tensor | None,
                step: int) -> tuple[Sent, torch.Tensor | None, torch.Tensor]:
    """Send ``sample`` of the bucket's compensated kept ``values`` (all of them when
    ``None``) through ``tier``, with the agreed chunk ``scales`` if any. Returns the send,
    the residual to keep (``None``: delivered exactly, and ``values`` may still be on the
    wire) and the bucket positions the average goes back to."""
    if sample is None:
        sent = tier.send(state.context(index, layout, layout.bounds, layout.kept_per_slot,
                                       scales, step), values)
        return sent, sent.error, layout.kept
    chosen = values.index_select(0, sample.chosen)
    sent = tier.send(state.context(index, layout, sample.bounds, sample.per_slot,
                                   sample.scales if sample.scales is not None else scales,
                                   step), chosen)
    if sent.error is None:
        values.index_fill_(0, sample.chosen, 0.0)
    else:
        values.index_copy_(0, sample.chosen, sent.error)
    return sent, values, sample.positions


def _keep_residual(state: CompactionState, index: int, layout: BucketLayout,
                   residual: torch.Tensor | None) -> None:
    """Store the bucket's residual at its kept positions, or forget it (``None``)."""
    if state.memory is None:
        return
    if residual is None:
        state.memory.drop_bucket(index)
    else:
        state.memory.store_kept(index, layout.slots, layout.kept, residual)


def send_whole_bucket(state: CompactionState, index: int, tier: Tier, buffer: torch.Tensor,
                      layout: BucketLayout) -> torch.futures.Future:
    """The fallback tier: residuals added at the kept positions (and delivered), then the
    tier sends the whole bucket (launched in bucket order, :class:`OrderedLauncher`)."""
    if state.memory is not None:
        residual = state.memory.bucket_residual(index, layout.slots, buffer.device)
        if residual is not None:
            buffer.index_add_(0, layout.kept, residual.index_select(0, layout.kept))
            state.memory.drop_bucket(index)
    assert tier.send_bucket is not None
    ctx = state.context(index, layout, layout.bounds, layout.kept_per_slot)
    return state.launcher.add(None, lambda: tier.send_bucket(ctx, buffer, layout.flat_mask),
                              buffer.device)


def send_compacted(state: CompactionState, index: int, tier: Tier, buffer: torch.Tensor,
                   layout: BucketLayout) -> torch.futures.Future:
    """A compacting tier: gather the kept entries, add their residuals, take this step's
    agreed sample of them (all when not sampling), let the tier send those, keep the error
    of what was sent and everything that was not, scatter the average back.

    Never waits: what needs the group's chunk maxima (the top-chunk sample, the ternary
    scales) has them agreed by a MAX started here, and the rest (sample, encode, send,
    residual) runs as the bucket's launch once the MAX is in (:class:`OrderedLauncher`;
    identical numbers to agreeing first, since the launch uses the same values and the
    draws of this bucket's step)."""
    values = state.gather(index, buffer, layout)
    if state.memory is not None:
        state.memory.compensate_kept(index, layout.slots, layout.kept, values)
    step = state.step
    agreement, early = None, None
    pick_top_chunks = state.chunks_to_agree(layout)
    if pick_top_chunks:
        # the top chunks' maxima are the scales of what they send, too
        agreement = start_agreement(state.comm, chunk_abs_max(values, layout.bounds),
                                    state.scale_group)
    elif state.send_density is not None:
        early = state.sample(layout)  # cyclic, or nothing to sample
        if tier.agrees_scales:
            sent_values = values if early is None else values.index_select(0, early.chosen)
            bounds = layout.bounds if early is None else early.bounds
            agreement = start_agreement(state.comm, chunk_abs_max(sent_values, bounds),
                                        state.scale_group)
    elif tier.agrees_scales:
        agreement = start_agreement(state.comm, chunk_abs_max(values, layout.bounds),
                                    state.scale_group)

    def launch() -> torch.futures.Future:
        agreed = None if agreement is None else agreement.value()[0]
        sample = state.top_chunks(layout, agreed) if pick_top_chunks else early
        sent, residual, positions = _send_share(state, index, tier, layout, values, sample,
                                                agreed, step)
        _keep_residual(state, index, layout, residual)
        return sent.future.then(_scatter_back(buffer, positions))

    if agreement is not None and not state.scales_apart:
        agreement.wait()  # one group: issue everything from the hook (see scales_apart)
    return state.launcher.add(agreement, launch, buffer.device)


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
    spec = state.tiers[tier]
    if not spec.compacts:
        send = send_whole_bucket
    elif state.send_select == "topk-ahead" and state.send_density is not None:
        send = send_ahead
    else:
        send = send_compacted
    future = send(state, index, spec, buffer, layout)
    if bucket.is_last():
        state.gradients_masked = True
        state.comm.end_step()
        state.close_step_timing()
        state.step += 1
    return future
