"""Compressors and memories on their own (no process group)."""

from __future__ import annotations

import itertools

import pytest
import torch

from pactrain.baselines.compressors import (
    SparseGradient,
    clip_to_sigma,
    k_for,
    parameter_generator,
    sampled_topk_compress,
    topk_compress,
)
from pactrain.baselines.memory import (
    BucketPieces,
    BucketSlot,
    MomentumCorrectionMemory,
    ResidualMemory,
)
from pactrain.methods.dgc import clip_locally, warmup_density
from pactrain.methods.terngrad import TernGradState, uniform_draws


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


def test_draws_follow_the_parameter_not_its_place_in_a_bucket() -> None:
    state = TernGradState(None, names=None, seed=3, rank=1, step=7)  # type: ignore[arg-type]
    a, b = BucketSlot("a", 0, 0, 2, (2,)), BucketSlot("b", 1, 2, 3, (3,))
    together = uniform_draws(state, (a, b), 5)
    b_first = uniform_draws(state, (b._replace(offset=0), a._replace(offset=3)), 5)
    assert torch.equal(together, torch.cat([b_first[3:], b_first[:3]]))
    alone = torch.rand(3, generator=parameter_generator(3, 1, 7, 1))
    assert torch.equal(together[2:], alone)
    state.step += 1  # the next step draws other numbers
    assert not torch.equal(uniform_draws(state, (a, b), 5), together)


def test_sparse_parts_join_at_their_offsets() -> None:
    parts = [(0, topk_compress(torch.tensor([1.0, -3.0]), 1)),
             (2, topk_compress(torch.tensor([0.5, 2.0, 0.0]), 1))]
    joined = SparseGradient.join(parts, 5)
    assert joined.to_dense().tolist() == [0.0, -3.0, 0.0, 2.0, 0.0]


def test_sigma_clipping_bounds_outliers() -> None:
    g = torch.cat([torch.zeros(99), torch.tensor([100.0])])
    assert clip_to_sigma(g, 2.5).max() < 100.0


def test_residual_memory_is_kept_per_parameter_name() -> None:
    memory = ResidualMemory()
    acc = memory.compensate("w", torch.tensor([1.0, 2.0, 3.0]))
    memory.update_sparse("w", acc, torch.tensor([1]))  # sent w[1]
    assert memory.compensate("w", torch.ones(3)).tolist() == [2.0, 1.0, 4.0]
    assert memory.compensate("b", torch.ones(2)).tolist() == [1.0, 1.0]
    again = ResidualMemory()
    again.load_state_dict(memory.state_dict())
    assert torch.equal(again.residuals["w"], memory.residuals["w"])
    with pytest.raises(ValueError, match="start the run again"):
        again.load_state_dict({"residuals": {0: torch.zeros(3)}})  # keyed by bucket index


def test_bucket_pieces_follow_a_rebuild_and_a_resume() -> None:
    owner: dict[int, torch.Tensor] = {}
    pieces = BucketPieces(owner)
    pieces.align(0, (("a", 2), ("b", 3)))
    pieces.align(1, (("c", 1),))
    owner[0], owner[1] = torch.arange(5.0), torch.tensor([9.0])
    # DDP rebuilt its buckets: b moved to the front of bucket 0, c joined it, a went to 1
    pieces.align(0, (("b", 3), ("c", 1)))
    assert owner[0].tolist() == [2.0, 3.0, 4.0, 9.0] and 1 not in owner
    pieces.align(1, (("a", 2),))
    assert owner[1].tolist() == [0.0, 1.0]
    saved = pieces.state_dict()
    assert saved["c"].tolist() == [9.0]
    # a resumed run: one bucket of everything, pieces placed at its first call
    resumed: dict[int, torch.Tensor] = {}
    again = BucketPieces(resumed)
    again.load_state_dict(saved)
    again.align(0, (("a", 2), ("b", 3), ("c", 1), ("d", 0)))
    assert resumed[0].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 9.0]
    wrong = BucketPieces({})
    wrong.load_state_dict(saved)
    with pytest.raises(ValueError, match="other method options"):
        wrong.align(0, (("a", 4),))  # e.g. written at another PowerSGD rank


def test_momentum_correction_accumulates_and_masks() -> None:
    memory = MomentumCorrectionMemory(momentum=0.5)
    g = torch.tensor([1.0, 1.0])
    assert memory.compensate("w", g).tolist() == [1.0, 1.0]  # u = g, v = u
    memory.update_sparse("w", torch.tensor([0]))
    # entry 0 was sent: u and v cleared; entry 1: u = 0.5 + 1, v = 1 + 1.5
    assert memory.compensate("w", g).tolist() == [1.0, 2.5]


def test_dgc_warm_up_and_local_clipping() -> None:
    schedule = [warmup_density(t, 0.001, 10) for t in range(12)]
    assert schedule[0] == 0.25 and schedule[-1] == 0.001
    assert all(x >= y for x, y in itertools.pairwise(schedule))
    assert warmup_density(0, 0.2, 5) == 0.25 and warmup_density(4, 0.2, 5) == 0.2
    clipped = clip_locally(torch.full((4,), 10.0), clip_norm=2.0, world=4)
    assert float(clipped.norm()) == pytest.approx(1.0)
