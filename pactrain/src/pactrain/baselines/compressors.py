"""Compressors: pure functions from a flat gradient to what would be sent, and back.

Nothing here talks to other ranks or keeps state between calls; randomness is passed in
(a ``torch.Generator`` seeded by :func:`draw_seed`) so results are reproducible per rank,
step and parameter. TernGrad's stochastic ternary code is
:func:`pactrain.tiers.ternary_encode`, shared with PacTrain's ternary tier.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch


def draw_seed(seed: int, rank: int, step: int, parameter: int) -> int:
    """Seed of one parameter's random draws at one step on one rank.

    Why not one generator per rank: its stream is consumed in bucket order, so after DDP
    rebuilds its buckets, or when a resumed run starts in another bucket layout, the same
    numbers land on other parameters; and its state would have to be checkpointed. A seed
    derived from (run seed, rank, step, parameter index) gives every parameter the same
    numbers whatever the layout, and only the step count needs to survive a resume.
    The mixing is that of :meth:`pactrain.compaction.CompactionState.uniform_draws`.
    """
    mixed = ((seed * 1_000_003 + rank) * 1_000_033 + step) * 4099
    return (mixed + parameter) % (2 ** 63)


def parameter_generator(seed: int, rank: int, step: int, parameter: int) -> torch.Generator:
    """A fresh generator seeded by :func:`draw_seed` (microseconds to make)."""
    return torch.Generator().manual_seed(draw_seed(seed, rank, step, parameter))


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
        dense = torch.zeros(self.numel, dtype=self.values.dtype)
        dense[self.indices] = self.values
        return dense


def topk_compress(flat: torch.Tensor, k: int) -> SparseGradient:
    """Exact top-``k`` by magnitude (ties resolved by ``torch.topk``)."""
    if k >= flat.numel():
        indices = torch.arange(flat.numel())
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
