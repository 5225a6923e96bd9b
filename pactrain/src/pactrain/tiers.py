"""Compressors of the compacted buffer, one per tier: pure functions, no communication.

Roles are split as in GRACE: this module only encodes and decodes (the *compressor*),
:class:`ErrorFeedback` keeps what lossy tiers dropped (the *memory*), and
:mod:`pactrain.compaction` is the only part that talks (the *communicator*).

Tiers and what one kept entry costs on the wire (bytes per rank, before the ring factor):

======== ===== =====================================================================
tier     bytes what is all-reduced
======== ===== =====================================================================
dense    4     the whole bucket in fp32 (pruned positions are zeros)
fp32     4     the kept entries only, fp32
fp16     2     the kept entries, fp16 (divided by N first, so the sum cannot overflow)
bf16     2     the kept entries, bf16
ternary  1     int8 codes in {-1, 0, 1} summed as int8 (|sum| <= N <= 127), plus one
               fp32 scale per parameter all-reduced with MAX before (4 bytes each)
packed   w/8   the same ternary codes, packed into carry-free ``w``-bit lanes of int32
               words (:class:`LanePacking`; ``w = ceil(log2(2N+1))``: 0.5 B for
               N <= 7, 0.4 B for N <= 3), plus the same per-parameter scales
======== ===== =====================================================================

Ternary is stochastic and unbiased: with shared scale ``s >= max|v|``, code ``t = sign(v)``
with probability ``|v|/s`` and 0 otherwise, so ``E[s * t] = v``. The scale is per parameter
(as in TernGrad's per-layer scaling): one scale for a whole bucket would let its largest
layer's gradients drown the others' in variance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

#: Tiers in order of bytes per kept entry (most to fewest).
TIERS: tuple[str, ...] = ("dense", "fp32", "fp16", "bf16", "ternary", "packed")
#: Bytes per transmitted entry of each tier at a given world size.
WIRE_BYTES: dict[str, int] = {"dense": 4, "fp32": 4, "fp16": 2, "bf16": 2, "ternary": 1}
#: Tiers whose averaged gradient differs from the exact average.
LOSSY_TIERS: frozenset[str] = frozenset({"fp16", "bf16", "ternary", "packed"})
#: Largest world size whose int8 sum of ternary codes cannot overflow.
MAX_TERNARY_WORLD_SIZE = 127

LOW_PRECISION: dict[str, torch.dtype] = {"fp16": torch.float16, "bf16": torch.bfloat16}


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


def ternary_codes(values: torch.Tensor, threshold: torch.Tensor) -> torch.Tensor:
    """``sign(v)`` where ``|v| > threshold`` else 0, as int8; ``threshold`` (``uniform *
    scale``, non-negative) is consumed (negated in place).

    The core of :func:`ternary_encode`, for callers that form ``uniform * scale`` cheaper
    themselves (the compaction hook scales its draw buffer per parameter in place, without
    expanding the scales to one per entry). A zero threshold is safe only where the values
    are zero too, as with a scale that is the group's max |v|.
    """
    codes = (values > threshold).to(torch.int8)
    return codes.sub_((values < threshold.neg_()).to(torch.int8))


def ternary_decode(summed: torch.Tensor, scale: torch.Tensor | float,
                   world_size: int) -> torch.Tensor:
    """Average of the ranks' ternary values: ``sum of codes * scale / world_size``."""
    return summed.to(torch.float32) * (torch.as_tensor(scale, dtype=torch.float32) / world_size)


def wire_bytes_per_entry(tier: str, world_size: int) -> float:
    """Payload bytes of one kept entry under ``tier`` (before the ring factor)."""
    if tier == "packed":
        return LanePacking.for_world(world_size).bytes_per_entry
    return float(WIRE_BYTES[tier])


@dataclass(frozen=True)
class LanePacking:
    """Ternary codes of N ranks packed so that an ordinary int32 SUM all-reduce adds them
    lane by lane, with no carry from one lane into the next.

    Why it works: N codes in {-1, 0, 1} sum to [-N, N], ``2N + 1`` values, which fit
    ``width = ceil(log2(2N + 1))`` bits. Every lane but the top one carries the code
    offset by +1 (in {0, 1, 2}); a lane's sum over any subset of ranks is then at most
    ``2N <= 2**width - 1``, so it never spills into its neighbour, and the partial sums a
    ring reduce-scatter forms are as safe as the total. The top lane carries the raw
    signed code: its sum ``t`` in [-N, N] makes the word ``t * 2**s + low`` with
    ``0 <= low < 2**s`` (``s`` = bits below the top lane), which stays inside int32 for
    every partial sum, so the all-reduce never overflows (no reliance on wrap-around of
    signed integers) and an arithmetic right shift by ``s`` recovers ``t`` exactly.
    ``lanes = floor(32 / width)``: 8 lanes (0.5 B per entry) for N <= 7, 10 lanes for
    N <= 3, 6 for N <= 15, down to 1 lane (4 B) only above 2**30 ranks.

    Layout: entry ``i`` of ``count`` sits in word ``i % words``, lane ``i // words``, so
    each lane is one contiguous slice of the codes (packing and unpacking are ``lanes``
    vectorised passes, no per-entry Python).

    Attributes:
        world_size: ranks whose codes are summed.
        width: bits per lane.
        lanes: lanes per int32 word.
    """

    world_size: int
    width: int
    lanes: int

    @classmethod
    def for_world(cls, world_size: int) -> LanePacking:
        """The narrowest lanes that hold a sum of ``world_size`` ternary codes."""
        if world_size < 1:
            raise ValueError(f"world size must be >= 1, got {world_size}")
        width = max(2, math.ceil(math.log2(2 * world_size + 1)))
        if width > 32:
            raise ValueError(f"{world_size} ranks need {width}-bit lanes, more than an "
                             "int32 word; use the fp16 tier")
        return cls(world_size, width, 32 // width)

    @property
    def bytes_per_entry(self) -> float:
        return 4.0 / self.lanes

    def words_for(self, count: int) -> int:
        """int32 words that carry ``count`` codes."""
        return -(-count // self.lanes)

    def pack(self, codes: torch.Tensor) -> torch.Tensor:
        """int8 codes in {-1, 0, 1} -> int32 words (``words_for(len(codes))`` of them)."""
        count = codes.numel()
        words = self.words_for(count)
        lanes = torch.zeros(self.lanes * words, dtype=torch.int32, device=codes.device)
        lanes[:count] = codes
        lanes = lanes.view(self.lanes, words)
        lanes[:-1] += 1  # offset codes; the top lane stays signed
        packed = lanes[-1] * (1 << self.width * (self.lanes - 1))
        for lane in range(self.lanes - 1):
            packed.add_(lanes[lane] << self.width * lane)
        return packed

    def unpack(self, summed: torch.Tensor, count: int) -> torch.Tensor:
        """Summed int32 words -> the ``count`` sums of codes (int32, in [-N, N])."""
        words = summed.numel()
        out = torch.empty(self.lanes, words, dtype=torch.int32, device=summed.device)
        field_mask = (1 << self.width) - 1
        for lane in range(self.lanes - 1):
            torch.bitwise_and(summed >> self.width * lane, field_mask, out=out[lane])
        out[:-1] -= self.world_size
        torch.bitwise_right_shift(summed, self.width * (self.lanes - 1), out=out[-1])
        return out.view(-1)[:count]


#: One parameter's place in a bucket: (canonical name, offset in the bucket, numel).
Slot = tuple[str, int, int]


@dataclass
class ErrorFeedback:
    """Residuals of lossy tiers, one per bucket (index, size), in bucket coordinates.

    Before compression the residual of the kept positions is added to the gradient; after
    it, what the tier did not deliver locally is stored back. Positions pruned later are
    never read again, so a mask change needs no remapping.

    DDP lays parameters out differently before and after its first-iteration rebuild, so a
    checkpoint stores residuals per parameter (:meth:`state_dict` splits them by the
    buckets' slots); after loading they wait in ``pending`` until :meth:`materialize`
    places them into whatever bucket layout the resumed run has.
    """

    residuals: dict[tuple[int, int], torch.Tensor] = field(default_factory=dict)
    pending: dict[str, torch.Tensor] = field(default_factory=dict)

    def materialize(self, key: tuple[int, int], slots: tuple[Slot, ...]) -> None:
        """Move pending per-parameter residuals of ``slots`` into bucket ``key``."""
        if not self.pending or not any(name in self.pending for name, _, _ in slots):
            return
        residual = self.residuals.get(key)
        if residual is None:
            residual = torch.zeros(key[1], dtype=torch.float32)
            self.residuals[key] = residual
        for name, offset, numel in slots:
            piece = self.pending.pop(name, None)
            if piece is not None:
                residual[offset:offset + numel] = piece.to(residual.device)

    def release(self, key: tuple[int, int], slots: tuple[Slot, ...]) -> None:
        """Split bucket ``key``'s residual into per-parameter pending pieces (its layout
        is about to change); :meth:`materialize` places them into the new layout."""
        residual = self.residuals.pop(key, None)
        if residual is not None:
            for name, offset, numel in slots:
                self.pending[name] = residual[offset:offset + numel].clone()

    def compensate(self, key: tuple[int, int], kept: torch.Tensor,
                   values: torch.Tensor) -> torch.Tensor:
        """``values`` plus the stored residual at ``kept`` (in place; returns values)."""
        residual = self.residuals.get(key)
        if residual is not None:
            values.add_(residual.index_select(0, kept))
        return values

    def store(self, key: tuple[int, int], numel: int, kept: torch.Tensor,
              error: torch.Tensor) -> None:
        """Remember ``error`` (what was meant minus what was delivered) at ``kept``."""
        residual = self.residuals.get(key)
        if residual is None or residual.numel() != numel:
            residual = torch.zeros(numel, dtype=torch.float32, device=error.device)
            self.residuals[key] = residual
        residual.index_copy_(0, kept, error)

    def drop(self, key: tuple[int, int]) -> None:
        """Forget the residual of ``key`` (after a lossless tier delivered it)."""
        self.residuals.pop(key, None)

    def state_dict(self, slots: dict[tuple[int, int], tuple[Slot, ...]]) -> dict:
        """Residuals per parameter name; ``slots`` maps each bucket key to its layout."""
        per_param = {name: r.clone() for name, r in self.pending.items()}
        for key, residual in self.residuals.items():
            for name, offset, numel in slots.get(key, ()):
                per_param[name] = residual[offset:offset + numel].clone()
        return per_param

    def load_state_dict(self, state: dict) -> None:
        self.residuals = {}
        self.pending = {name: r.clone() for name, r in state.items()}
