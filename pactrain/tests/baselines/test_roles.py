"""Compressors and memories on their own (no process group)."""

from __future__ import annotations

import itertools

import pytest
import torch

from pactrain.baselines.compressors import (
    clip_to_sigma,
    k_for,
    sampled_topk_compress,
    ternarize,
    topk_compress,
)
from pactrain.baselines.memory import MomentumCorrectionMemory, ResidualMemory, relayout
from pactrain.methods.dgc import clip_locally, warmup_density


def test_k_for_rounds_up_and_refuses_bad_density() -> None:
    assert k_for(10, 0.01) == 1 and k_for(1000, 0.2) == 200 and k_for(5, 1.0) == 5
    with pytest.raises(ValueError, match="density"):
        k_for(10, 0.0)


def test_sampled_threshold_selects_the_exact_top_k() -> None:
    g = torch.randn(50_000, generator=torch.Generator().manual_seed(0))
    exact = set(topk_compress(g, 500).indices.tolist())
    sampled = sampled_topk_compress(g, 500, torch.Generator().manual_seed(1))
    assert set(sampled.indices.tolist()) == exact
    assert torch.equal(sampled.to_dense()[sampled.indices], g[sampled.indices])


def test_ternarize_is_unbiased_with_codes_in_minus_one_zero_one() -> None:
    g = torch.tensor([0.5, -0.25, 0.0, 1.0])
    scale = torch.full_like(g, 1.0)
    gen = torch.Generator().manual_seed(0)
    codes = torch.stack([ternarize(g, scale, gen) for _ in range(20_000)])
    assert codes.dtype == torch.int8 and set(codes.unique().tolist()) <= {-1, 0, 1}
    assert torch.allclose(codes.float().mean(0), g, atol=0.02)
    assert torch.equal(codes[:, 3], torch.ones(20_000, dtype=torch.int8))  # |g| = scale


def test_sigma_clipping_bounds_outliers() -> None:
    g = torch.cat([torch.zeros(99), torch.tensor([100.0])])
    assert clip_to_sigma(g, 2.5).max() < 100.0


def test_residual_memory_survives_a_bucket_rebuild() -> None:
    a, b = torch.zeros(2), torch.zeros(3)
    memory = ResidualMemory()
    old = ((id(a), 2), (id(b), 3))
    acc = memory.compensate(0, torch.tensor([1.0, 2, 3, 4, 5]), old)
    memory.update_sparse(0, acc, torch.tensor([0]))  # sent a[0]; kept a[1], b
    new = ((id(b), 3), (id(a), 2))  # DDP rebuilt the bucket in ready order
    again = memory.compensate(0, torch.zeros(5), new)
    assert again.tolist() == [3.0, 4.0, 5.0, 0.0, 2.0]
    assert relayout(torch.arange(5.0), old, ((id(b), 3),)).tolist() == [2.0, 3.0, 4.0]


def test_momentum_correction_accumulates_and_masks() -> None:
    memory = MomentumCorrectionMemory(momentum=0.5)
    g = torch.tensor([1.0, 1.0])
    assert memory.compensate(0, g).tolist() == [1.0, 1.0]  # u = g, v = u
    memory.update_sparse(0, torch.tensor([0]))
    # entry 0 was sent: u and v cleared; entry 1: u = 0.5 + 1, v = 1 + 1.5
    assert memory.compensate(0, g).tolist() == [1.0, 2.5]


def test_dgc_warm_up_and_local_clipping() -> None:
    schedule = [warmup_density(t, 0.001, 10) for t in range(12)]
    assert schedule[0] == 0.25 and schedule[-1] == 0.001
    assert all(x >= y for x, y in itertools.pairwise(schedule))
    assert warmup_density(0, 0.2, 5) == 0.25 and warmup_density(4, 0.2, 5) == 0.2
    clipped = clip_locally(torch.full((4,), 10.0), clip_norm=2.0, world=4)
    assert float(clipped.norm()) == pytest.approx(1.0)
