"""Compressors: pure functions from gradients to what is sent, and back (GRACE's compressor).

Nothing here talks to other ranks or keeps state between calls; randomness comes in as
draws or generators seeded by :func:`draw_seed`, so results are reproducible per rank,
step and parameter. PacTrain's tiers and the baselines share every function: TernGrad's
codes are PacTrain's ternary codes, DGC's sampled selection falls back to top-k.

PacTrain's tiers (one module each in :mod:`pactrain.tiers`) and what one kept entry
costs on the wire (bytes per rank, before the ring factor):

======== ===== =====================================================================
tier     bytes what is all-reduced
======== ===== =====================================================================
dense    4     the whole bucket in fp32 (pruned positions are zeros)
fp32     4     the kept entries only, fp32
fp16     2     the kept entries, fp16 (divided by N first, so the sum cannot overflow)
bf16     2     the kept entries, bf16
ternary  1     int8 codes in {-1, 0, 1} summed as int8 (|sum| <= N <= 127), plus one
               fp32 scale per parameter all-reduced with MAX before (4 bytes each)
packed   4/k   the same ternary codes as carry-free base-(2N+1) digits of int32 words
               (:class:`RadixPacking`; ``k`` digits a word: 0.4 B at N = 4, 0.31 B
               at N = 2, 0.5 B at N = 7), plus the same per-parameter scales
======== ===== =====================================================================

Ternary is stochastic and unbiased: with shared scale ``s >= max|v|``, code ``t = sign(v)``
with probability ``|v|/s`` and 0 otherwise, so ``E[s * t] = v``. The scale is per parameter
(as in TernGrad's per-layer scaling): one scale for a whole bucket would let its largest
layer's gradients drown the others' in variance.

Sparse selections (top-k, DGC) send ``k`` (value, index) pairs: :class:`SparseGradient`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import torch

# -- ternary codes ---------------------------------------------------------------------------

#: Largest world size whose int8 sum of ternary codes cannot overflow (PacTrain's ternary
#: tier and TernGrad alike).
MAX_TERNARY_WORLD_SIZE = torch.iinfo(torch.int8).max


def check_int8_sum(world_size: int, fix: str) -> None:
    """Refuse to sum ternary codes as int8 over more ranks than int8 can count.

    Raises:
        ValueError: above :data:`MAX_TERNARY_WORLD_SIZE` ranks, with ``fix`` as the advice.
    """
    if world_size > MAX_TERNARY_WORLD_SIZE:
        raise ValueError(
            f"ternary codes are summed as int8, which overflows above "
            f"{MAX_TERNARY_WORLD_SIZE} workers (world size {world_size}); {fix}"
        )


def ternary_encode(values: torch.Tensor, scale: torch.Tensor | float,
                   uniform: torch.Tensor) -> torch.Tensor:
    """Stochastic ternary codes of ``values`` under ``scale`` (int8 in {-1, 0, 1}).

    Code ``sign(v)`` where ``uniform * scale < |v|`` (i.e. with probability ``|v|/scale``),
    else 0. Written as two comparisons against the threshold ``uniform * scale`` rather than
    a division, ``sign`` and a float product: this runs on every kept entry of every bucket
    each step, and the comparison form makes one float temporary instead of four.

    Args:
        values: fp32 entries, ``|values| <= scale``.
        scale: the shared scale, one number or one per entry (the group's max |value| of
            the entry's parameter); where it is 0 the code is 0.
        uniform: U[0, 1) draws, one per entry (drawn by the caller so the stream is
            deterministic in bucket order).
    """
    if not isinstance(scale, torch.Tensor):
        if scale <= 0:
            return torch.zeros(values.shape, dtype=torch.int8, device=values.device)
        threshold = uniform * scale
    else:
        scale = scale.to(values.dtype)
        threshold = (uniform * scale).masked_fill_(scale <= 0, float("inf"))
    return ternary_codes(values, threshold)


def mask_multiplier(mask: torch.Tensor) -> torch.Tensor:
    """A bool keep-mask as the 0/1 factor to multiply a float tensor by: its uint8 view
    (no copy, same result). Why: ``float.mul_(bool)`` takes PyTorch's type-promoting
    elementwise path, 12.3 ms on one core for fashion-cnn's 3.2 M-entry layer, where the
    uint8 view takes 3.7 ms (and ``mask.to(float)`` first 14.6 ms); measured with torch
    2.13 on this project's 2-core machine. Gradient masking runs every step."""
    return mask.view(torch.uint8) if mask.dtype == torch.bool else mask


def ternary_codes(values: torch.Tensor, threshold: torch.Tensor) -> torch.Tensor:
    """``sign(v)`` where ``|v| > threshold`` else 0, as int8; ``threshold`` (``uniform *
    scale``, non-negative) is consumed (negated in place).

    The core of :func:`ternary_encode`, for callers that form ``uniform * scale`` cheaper
    themselves (per parameter in place, :func:`scale_slots`, without expanding the scales
    to one per entry). A zero threshold is safe only where the values are zero too, as
    with a scale that is the group's max |v|.
    """
    codes = (values > threshold).to(torch.int8)
    return codes.sub_((values < threshold.neg_()).to(torch.int8))


def ternary_decode(summed: torch.Tensor, scale: torch.Tensor | float,
                   world_size: int) -> torch.Tensor:
    """Average of the ranks' ternary values: ``sum of codes * scale / world_size``."""
    return summed.to(torch.float32) * (torch.as_tensor(scale, dtype=torch.float32) / world_size)


@dataclass(frozen=True)
class RadixPacking:
    """Ternary codes of N ranks packed as base-(2N+1) digits of int32 words, so that an
    ordinary int32 SUM all-reduce adds them digit by digit, with no carry between digits.

    Why it works: N codes in {-1, 0, 1} sum to [-N, N], ``B = 2N + 1`` values. Every digit
    but the top one carries the code offset by +1 (in {0, 1, 2}); a digit's sum over any
    subset of ranks is then at most ``2N = B - 1``, so it never carries into the next, and
    the partial sums a ring reduce-scatter forms are as safe as the total. The top digit
    carries the raw signed code: its sum ``t`` in [-N, N] makes the word
    ``t * B**(k-1) + low`` with ``0 <= low < B**(k-1)``, which stays inside int32 for every
    partial sum while ``(N + 1) * B**(k-1) <= 2**31`` (no reliance on wrap-around of signed
    integers), and a floor division by ``B**(k-1)`` recovers ``t`` exactly. ``k``, the
    digits per word, is the largest that bound allows: 10 base-9 digits at N = 4 (3.2 bits,
    0.4 B per entry: log2(9) = 3.17 is the floor), 13 base-5 at N = 2, 8 base-15 at N = 7,
    4 base-255 at N = 127. Binary lanes of ``ceil(log2(2N+1))`` bits (what this tier used
    before) hold as many digits only when ``2N + 1`` is a power of two; at N = 4 they held 8.

    Layout: entry ``i`` of ``count`` sits in word ``i % words``, digit ``i // words``, so
    each digit is one contiguous slice of the codes (packing and unpacking are ``digits``
    vectorised passes, no per-entry Python).

    Codes of ``L`` levels a side (``levels``; codes in [-L, L], the ``quinary`` tier's
    L = 2) pack the same way with ``M = N x L`` in place of N: base ``2M + 1``, lower
    digits offset by +L, the bound ``(M + 1) * B**(k-1) <= 2**31`` (7 base-17 digits at
    N = 4, L = 2: 4.57 bits per entry).

    Attributes:
        world_size: ranks whose codes are summed.
        base: ``2 * world_size * levels + 1``.
        digits: digits per int32 word.
        levels: the largest code magnitude (1 for ternary codes).
    """

    world_size: int
    base: int
    digits: int
    levels: int = 1

    @classmethod
    def for_world(cls, world_size: int, levels: int = 1) -> RadixPacking:
        """The most base-(2NL+1) digits an int32 word holds for ``world_size`` ranks'
        codes in [-levels, levels]."""
        if world_size < 1:
            raise ValueError(f"world size must be >= 1, got {world_size}")
        if levels < 1:
            raise ValueError(f"levels must be >= 1, got {levels}")
        reach = world_size * levels  # the largest |sum of codes|
        if reach + 1 > 2 ** 31:
            raise ValueError(f"{world_size} ranks overflow an int32 word; use the fp16 tier")
        base = 2 * reach + 1
        lower = 0  # digits below the signed top one
        while (reach + 1) * base ** (lower + 1) <= 2 ** 31:
            lower += 1
        return cls(world_size, base, lower + 1, levels)

    @property
    def bytes_per_entry(self) -> float:
        return 4.0 / self.digits

    def words_for(self, count: int) -> int:
        """int32 words that carry ``count`` codes."""
        return -(-count // self.digits)

    def pack(self, codes: torch.Tensor) -> torch.Tensor:
        """int8 codes in [-levels, levels] -> int32 words (``words_for(len(codes))``).

        In int32 throughout: one rank's word is below ``2 * B**(k-1) <= 2**31`` by the
        bound above (int64 buffers cost 4x the time: 1.4 ms against 0.36 ms of CPU for
        324 K codes, one thread).
        """
        count = codes.numel()
        words = self.words_for(count)
        digits = torch.zeros(self.digits * words, dtype=torch.int32, device=codes.device)
        digits[:count] = codes
        digits = digits.view(self.digits, words)
        digits[:-1] += self.levels  # offset codes; the top digit stays signed
        packed = digits[-1] * self.base ** (self.digits - 1)
        for digit in range(self.digits - 1):
            packed.add_(digits[digit], alpha=self.base ** digit)
        return packed

    def unpack(self, summed: torch.Tensor, count: int) -> torch.Tensor:
        """Summed int32 words -> the ``count`` sums of codes (int32, in [-NL, NL]).

        Digits are peeled off in float64, which holds every int32 exactly: ``x / B`` is
        correctly rounded and ``x mod B >= 1`` puts it at least ``1/B`` below the next
        integer, far above float64's spacing there, so ``floor(x / B)`` is the integer
        quotient. Why not integer division: PyTorch's int64 floor division and remainder
        are scalar loops; this was 1.4 ms against 3.9-4.4 ms of CPU for 324 K codes.
        """
        words = summed.numel()
        low = summed.to(torch.float64)
        top_unit = float(self.base ** (self.digits - 1))
        out = torch.empty(self.digits, words, dtype=torch.float64, device=summed.device)
        torch.floor(low / top_unit, out=out[-1])  # the signed top digit
        low.sub_(out[-1] * top_unit)
        base = float(self.base)
        for digit in range(self.digits - 1):
            high = torch.floor(low / base)
            torch.sub(low, high, alpha=base, out=out[digit])
            low = high
        out[:-1] -= self.world_size * self.levels
        return out.view(-1)[:count].to(torch.int32)


# -- per-parameter slots of a flat buffer ------------------------------------------------------

#: (start, end) of each parameter's slot in a flat buffer (a bucket or its compacted entries).
Bounds = tuple[tuple[int, int], ...]


def segment_bounds(lengths: Iterable[int]) -> Bounds:
    """(start, end) of consecutive segments of the given lengths."""
    lengths = list(lengths)
    ends = list(itertools.accumulate(lengths))
    return tuple(zip([0, *ends[:-1]], ends, strict=True))


#: Consecutive kept entries that share one ternary scale in PacTrain's ternary tiers.
#: Why chunks and not one scale per parameter: a stochastic ternary code's variance grows
#: with its scale (``E[(code x s - v)^2] = |v| s - v^2``), and the max of a 3136x1024
#: layer's gradient is far above its typical entry, so one scale per parameter drowns the
#: small entries in noise (on Fashion-MNIST, 90% sparse, the per-parameter tiers ended 5
#: points below dense). QSGD (Alistarh et al., NeurIPS 2017) and CGX bound that variance
#: by quantizing in buckets of a few hundred entries; 256 costs 4 B of scale per 256
#: entries (4% on the packed tier's 0.4 B per entry at 4 workers).
SCALE_CHUNK = 256


def chunk_count(entries: int, chunk: int = SCALE_CHUNK) -> int:
    """Scales for ``entries`` kept entries (the last chunk may be shorter)."""
    return -(-entries // chunk)


def chunk_abs_max(values: torch.Tensor, bounds: Bounds,
                  chunk: int = SCALE_CHUNK) -> torch.Tensor:
    """``max |v|`` of every ``chunk`` consecutive entries of each slot of a flat buffer
    (each slot's last chunk may be shorter): the ternary scales, slot after slot, before
    the group agrees on their MAX.

    Why chunks restart at every slot (parameter): they are then a function of the
    parameter and its mask only, not of where DDP's bucket layout puts the parameter, so a
    resumed run (which starts in DDP's first, unrebuilt layout) draws the same scales as
    the uninterrupted one. One ``amax`` and one ``amin`` over a (chunks, chunk) view per
    slot (a loop over parameters, tens), no copy of the values. Not ``aminmax(dim=1)``,
    which gives the same two numbers per chunk: on resnet18's 1.1 M kept entries one
    ``aminmax(dim=1)`` took 3.2 ms on one thread against 0.2 ms for the pair (an AMD EPYC
    host), on every bucket of every step.
    """
    out = torch.empty(sum(chunk_count(end - start, chunk) for start, end in bounds),
                      dtype=values.dtype, device=values.device)
    at = 0
    for start, end in bounds:
        n = end - start
        full = n // chunk * chunk
        if full:
            rows = values[start:start + full].view(-1, chunk)
            torch.maximum(rows.amax(dim=1), rows.amin(dim=1).neg_(),
                          out=out[at:at + full // chunk])
            at += full // chunk
        if n > full:
            low, high = torch.aminmax(values[start + full:end])
            out[at] = torch.maximum(high, low.neg())
            at += 1
    return out


def scale_chunks(tensor: torch.Tensor, factors: torch.Tensor, bounds: Bounds,
                 chunk: int = SCALE_CHUNK) -> torch.Tensor:
    """Multiply every chunk of each slot of a flat buffer in place by its factor (laid out
    as :func:`chunk_abs_max` returns them); returns the buffer."""
    at = 0
    for start, end in bounds:
        n = end - start
        full = n // chunk * chunk
        if full:
            tensor[start:start + full].view(-1, chunk).mul_(
                factors[at:at + full // chunk, None])
            at += full // chunk
        if n > full:
            tensor[start + full:end].mul_(factors[at])
            at += 1
    return tensor


def level_codes(values: torch.Tensor, step: torch.Tensor, bounds: Bounds,
                uniform: torch.Tensor, levels: int, chunk: int = SCALE_CHUNK) -> torch.Tensor:
    """Stochastic codes of ``levels`` a side: ``sign(v) x floor(|v| / step + u)`` as int8,
    ``step`` one per chunk (laid out as :func:`chunk_abs_max` returns them), ``u`` the
    entry's draw, so a code rounds up with probability ``frac(|v| / step)`` (unbiased;
    draws of 1/2 round to the nearest level). A chunk whose step is 0 (all its values
    are) gets codes 0. With ``step = scale / levels`` and ``|v| <= scale`` the codes lie
    in [-levels, levels] (clamped against float rounding at ``|v| = scale``).
    ``levels=1`` draws the ternary codes' distribution (:func:`ternary_codes` forms them
    cheaper)."""
    inverse = torch.where(step > 0, 1.0 / step.clamp_min(torch.finfo(step.dtype).tiny),
                          torch.zeros_like(step))
    magnitude = scale_chunks(values.abs(), inverse, bounds, chunk)
    magnitude.add_(uniform).floor_().clamp_(max=levels)
    return magnitude.to(torch.int8).mul_(torch.sign(values).to(torch.int8))


def slot_abs_max(values: torch.Tensor, bounds: Bounds) -> torch.Tensor:
    """``max |v|`` of each slot of a flat buffer (0 for an empty slot): the per-parameter
    ternary scales, before the group agrees on their MAX.

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


def scale_slots(tensor: torch.Tensor, factors: torch.Tensor, bounds: Bounds) -> torch.Tensor:
    """Multiply each slot of a flat buffer in place by its factor; returns it.

    Why a loop over slots: it is over parameters (tens), each iteration one vectorised
    multiply of a view by a 0-d tensor (no sync); expanding the factors to one per entry
    (``repeat_interleave``) would cost an extra allocation and pass over the entries.
    """
    for (start, end), factor in zip(bounds, factors, strict=True):
        tensor[start:end].mul_(factor)
    return tensor


# -- random draws --------------------------------------------------------------------------

def draw_seed(seed: int, rank: int, step: int, parameter: int) -> int:
    """Seed of one parameter's random draws at one step on one rank.

    Why not one generator per rank: its stream is consumed in bucket order, so after DDP
    rebuilds its buckets, or when a resumed run starts in another bucket layout, the same
    numbers land on other parameters; and its state would have to be checkpointed. A seed
    derived from (run seed, rank, step, parameter index) gives every parameter the same
    numbers whatever the layout, and only the step count needs to survive a resume.
    """
    mixed = ((seed * 1_000_003 + rank) * 1_000_033 + step) * 4099
    return (mixed + parameter) % (2 ** 63)


def parameter_generator(seed: int, rank: int, step: int, parameter: int) -> torch.Generator:
    """A fresh generator seeded by :func:`draw_seed` (microseconds to make)."""
    return torch.Generator().manual_seed(draw_seed(seed, rank, step, parameter))


def uniform_draws(out: torch.Tensor, seed: int, rank: int, step: int,
                  parameters: Iterable[int], counts: Iterable[int]) -> torch.Tensor:
    """Fill ``out`` with U[0, 1) draws, consecutive pieces of ``counts`` entries, each from
    its parameter's generator (:func:`parameter_generator`); returns ``out``.

    Written in place so a caller can reuse one buffer per bucket: seeding a generator
    costs microseconds, concatenating per-parameter tensors a full extra pass. The numbers
    are those of ``torch.rand(count, generator=...)`` per parameter.
    """
    offset = 0
    for parameter, count in zip(parameters, counts, strict=True):
        generator = parameter_generator(seed, rank, step, parameter)
        out[offset:offset + count].uniform_(generator=generator)
        offset += count
    return out


# -- sparse selections ---------------------------------------------------------------------

def k_for(numel: int, density: float) -> int:
    """Number of entries to keep: ``ceil(density * numel)``, at least 1, at most ``numel``."""
    if not 0.0 < density <= 1.0:
        raise ValueError(f"density must be in (0, 1], got {density}; e.g. 0.01 keeps 1%")
    return max(1, min(numel, math.ceil(density * numel)))


@dataclass(frozen=True)
class SparseGradient:
    """The ``k`` kept entries of a flat tensor of ``numel`` entries."""

    values: torch.Tensor  # float32, shape (k,)
    indices: torch.Tensor  # int64, shape (k,)
    numel: int

    @classmethod
    def join(cls, parts: Sequence[tuple[int, SparseGradient]], numel: int) -> SparseGradient:
        """One sparse gradient of a flat buffer of ``numel`` entries from the sparse
        gradients of its slices, each given with the offset of its slice."""
        if not parts:
            return cls(torch.zeros(0), torch.zeros(0, dtype=torch.int64), numel)
        return cls(torch.cat([part.values for _, part in parts]),
                   torch.cat([part.indices + offset for offset, part in parts]), numel)

    def to_dense(self) -> torch.Tensor:
        dense = torch.zeros(self.numel, dtype=self.values.dtype, device=self.values.device)
        dense[self.indices] = self.values
        return dense


def topk_compress(flat: torch.Tensor, k: int) -> SparseGradient:
    """Exact top-``k`` by magnitude (ties resolved by ``torch.topk``)."""
    if k >= flat.numel():
        indices = torch.arange(flat.numel(), device=flat.device)
    else:
        indices = torch.topk(flat.abs(), k, sorted=False).indices
    return SparseGradient(flat[indices], indices, flat.numel())


def sampled_topk_compress(
    flat: torch.Tensor, k: int, generator: torch.Generator, sample_fraction: float = 0.01
) -> SparseGradient:
    """DGC's hierarchical selection: estimate the threshold on a random sample, then take
    the exact top-``k`` among the (few) candidates above it.

    Why: a full top-k over millions of entries costs more than the gradient it saves on a
    fast link; a 1% sample gives the threshold, and the exact top-k then runs on about
    ``1.25 k`` candidates. Falls back to a full top-k if the sample underestimated.
    """
    numel = flat.numel()
    if k >= numel:
        return topk_compress(flat, k)
    magnitude = flat.abs()
    n_sample = min(numel, max(1_000, int(sample_fraction * numel)))
    sample = magnitude[torch.randint(0, numel, (n_sample,), generator=generator)]
    # Aim a little below the k-th largest so that usually at least k candidates pass.
    keep = min(n_sample, max(1, math.ceil(1.25 * k / numel * n_sample)))
    threshold = torch.topk(sample, keep, sorted=False).values.min()
    candidates = torch.nonzero(magnitude >= threshold).view(-1)
    if candidates.numel() < k:
        return topk_compress(flat, k)
    chosen = candidates[torch.topk(magnitude[candidates], k, sorted=False).indices]
    return SparseGradient(flat[chosen], chosen, numel)


def clip_to_sigma(flat: torch.Tensor, sigma: float) -> torch.Tensor:
    """TernGrad's gradient clipping: limit entries to ``sigma`` standard deviations.

    Why: the scale is the largest magnitude, so one outlier would make every other entry
    nearly always round to zero; clipping at 2.5 sigma trades a small bias for much less
    variance (Wen et al. 2017, section 3.3).
    """
    if flat.numel() < 2:
        return flat
    bound = sigma * flat.std()
    return flat.clamp(-bound, bound)
