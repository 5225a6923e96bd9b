"""What the ternary tiers round with: U[0, 1) draws per parameter (``stochastic``), or
halves (``nearest``: the same rule ``|v| > u x scale`` then rounds to the nearest code)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from pactrain.compaction.buffers import BufferPool
from pactrain.compaction.layout import BucketLayout
from pactrain.compression.compressors import uniform_draws
from pactrain.compression.memory import BucketSlot

#: The buffer kind the draws of a bucket live in (:class:`BufferPool`).
DRAWS = "draws"


class Draws:
    """This rank's draws, seeded by (seed, rank, step, parameter), in one buffer per
    bucket index reused every step (valid until the next call for that bucket).

    Args:
        seed, rank: the run seed and this rank.
        pool: where the buffers live.
    """

    def __init__(self, seed: int, rank: int, pool: BufferPool) -> None:
        self.seed = seed
        self.rank = rank
        self._pool = pool

    def uniform(self, index: int, slots: tuple[BucketSlot, ...], per_slot: tuple[int, ...],
                device: torch.device, step: int) -> torch.Tensor:
        """U[0,1) per entry sent, ``per_slot[i]`` of them for parameter ``slots[i]``,
        drawn per parameter (:func:`~pactrain.compression.compressors.uniform_draws`:
        seeded by seed, rank, step and parameter, so the same numbers reach the same
        weights whatever the bucket layout, which keeps a resumed run identical to an
        uninterrupted one). ``step``: the step the bucket belongs to (a launch that runs
        after the last bucket's hook passes its own)."""
        # CPU generators give the same numbers on every device; pinned for the copy
        out = self._pool.take(DRAWS, index, sum(per_slot), torch.float32, torch.device("cpu"),
                              pin_memory=device.type == "cuda")
        draws = uniform_draws(out, self.seed, self.rank, step,
                              [slot.index for slot in slots], per_slot)
        return draws.to(device)  # blocking: the buffer is reused next step

    def half_thresholds(self, index: int, count: int, device: torch.device) -> torch.Tensor:
        """``count`` halves, where the draws would go: with them the ternary rule
        ``|v| > u x scale`` rounds to the nearest code (the buffer is reused per bucket;
        the tier scales it in place, so it is refilled every call)."""
        return self._pool.take(DRAWS, index, count, torch.float32, device).fill_(0.5)

    def source(self, rounding: str, index: int, layout: BucketLayout,
               per_slot: tuple[int, ...], step: Callable[[], int],
               ) -> Callable[[], torch.Tensor]:
        """The draws of one send of bucket ``index`` under ``rounding``
        (:data:`~pactrain.compaction.options.ROUNDINGS`), made only when the tier asks;
        ``step`` is read then too."""
        device = layout.kept.device
        if rounding == "nearest":
            return lambda: self.half_thresholds(index, sum(per_slot), device)
        return lambda: self.uniform(index, layout.slots, per_slot, device, step())
