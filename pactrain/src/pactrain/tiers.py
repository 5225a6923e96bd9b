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
               fp32 scale all-reduced with MAX before (4 bytes)
======== ===== =====================================================================

Ternary is stochastic and unbiased: with shared scale ``s >= max|v|``, code ``t = sign(v)``
with probability ``|v|/s`` and 0 otherwise, so ``E[s * t] = v``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

#: Tiers in order of bytes per kept entry (most to fewest).
TIERS: tuple[str, ...] = ("dense", "fp32", "fp16", "bf16", "ternary")
#: Bytes per transmitted entry of each tier.
WIRE_BYTES: dict[str, int] = {"dense": 4, "fp32": 4, "fp16": 2, "bf16": 2, "ternary": 1}
#: Tiers whose averaged gradient differs from the exact average.
LOSSY_TIERS: frozenset[str] = frozenset({"fp16", "bf16", "ternary"})
#: Largest world size whose int8 sum of ternary codes cannot overflow.
MAX_TERNARY_WORLD_SIZE = 127

LOW_PRECISION: dict[str, torch.dtype] = {"fp16": torch.float16, "bf16": torch.bfloat16}


def ternary_encode(values: torch.Tensor, scale: float, uniform: torch.Tensor) -> torch.Tensor:
    """Stochastic ternary codes of ``values`` under ``scale`` (int8 in {-1, 0, 1}).

    Args:
        values: fp32 entries, ``|values| <= scale``.
        scale: the shared scale (the group's max |value|); 0 gives all-zero codes.
        uniform: U[0, 1) draws, one per entry (drawn by the caller so the stream is
            deterministic in bucket order).
    """
    if scale <= 0.0:
        return torch.zeros_like(values, dtype=torch.int8)
    keep = uniform < values.abs() / scale
    return (torch.sign(values) * keep).to(torch.int8)


def ternary_decode(summed: torch.Tensor, scale: float, world_size: int) -> torch.Tensor:
    """Average of the ranks' ternary values: ``sum of codes * scale / world_size``."""
    return summed.to(torch.float32) * (scale / world_size)


@dataclass
class ErrorFeedback:
    """Residuals of lossy tiers, one per bucket (index, size), in bucket coordinates.

    Before compression the residual of the kept positions is added to the gradient; after
    it, what the tier did not deliver locally is stored back. Positions pruned later are
    never read again, so a mask change needs no remapping.
    """

    residuals: dict[tuple[int, int], torch.Tensor] = field(default_factory=dict)

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

    def state_dict(self) -> dict:
        return {f"{i}:{n}": r.clone() for (i, n), r in self.residuals.items()}

    def load_state_dict(self, state: dict) -> None:
        self.residuals = {}
        for key, residual in state.items():
            index, numel = key.split(":")
            self.residuals[(int(index), int(numel))] = residual.clone()
