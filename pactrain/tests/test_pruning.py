"""Gradual magnitude pruning: schedule, ranking, enforcement (single process)."""

import math

import pytest
import torch
from torch import nn

from pactrain.names import OPTIMIZERS
from pactrain.pruning import LAMP_SAMPLE, GradualPruner, NothingToPruneError, PruningConfig
from pactrain.train.optimizers import build_optimizer


def _model(seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Conv2d(1, 4, 3), nn.Flatten(), nn.Linear(4 * 6 * 6, 10),
                         nn.LayerNorm(10), nn.Linear(10, 3))


def test_cubic_schedule_matches_formula_and_updates_on_frequency() -> None:
    config = PruningConfig(final_sparsity=0.8, start_step=10, end_step=50, frequency=10)
    assert config.target_sparsity(0) == 0.0
    assert config.target_sparsity(10) == 0.0
    assert config.target_sparsity(30) == pytest.approx(0.8 - 0.8 * 0.5 ** 3)
    assert config.target_sparsity(50) == pytest.approx(0.8)
    assert config.target_sparsity(500) == pytest.approx(0.8)
    updates = [t for t in range(100) if config.is_update_step(t)]
    assert updates == [10, 20, 30, 40, 50]
    early = PruningConfig.for_run(100, 0.9, start=0.0, end=0.2, initial=0.5)
    assert early.target_sparsity(0) == pytest.approx(0.5)  # s_i at t0: sparse at once
    assert early.target_sparsity(10) == pytest.approx(0.9 - 0.4 * 0.5 ** 3)
    assert early.target_sparsity(20) == pytest.approx(0.9)
    odd = PruningConfig(final_sparsity=0.5, start_step=0, end_step=25, frequency=10)
    assert [t for t in range(40) if odd.is_update_step(t)] == [0, 10, 20, 25]


@pytest.mark.parametrize("scope", ["lamp", "global", "layer"])
def test_masks_hit_target_sparsity_and_prune_smallest(scope: str) -> None:
    model = _model()
    pruner = GradualPruner(model, PruningConfig(final_sparsity=0.7, scope=scope))
    assert set(pruner.masks) == {"0.weight", "2.weight", "4.weight"}  # no biases, no norms
    assert pruner.update_masks(0.7)
    total = sum(m.numel() for m in pruner.masks.values())
    kept = sum(int(m.sum()) for m in pruner.masks.values())
    assert total - kept == int(0.7 * total) if scope != "layer" else kept < 0.31 * total + 3
    for name, mask in pruner.masks.items():
        weight = pruner.params[name].detach().abs()
        if scope == "layer":
            assert mask.numel() - int(mask.sum()) == int(0.7 * mask.numel())
        if mask.any() and (~mask).any():
            assert weight[~mask].max() <= weight[mask].min()


def test_lamp_ignores_a_layers_scale_where_global_magnitude_does_not() -> None:
    """GPT-2's residual projections start at a third of the others' scale: a global |w|
    ranking then prunes them almost whole, LAMP prunes as if the scales were equal."""
    masks = {}
    for scope in ("lamp", "global"):
        for scale in (1.0, 0.05):
            model = _model()
            with torch.no_grad():
                model[0].weight.mul_(scale)
            pruner = GradualPruner(model, PruningConfig(final_sparsity=0.8, scope=scope))
            pruner.update_masks(0.8)
            masks[scope, scale] = {n: m.clone() for n, m in pruner.masks.items()}
    for name in masks["lamp", 1.0]:
        assert torch.equal(masks["lamp", 1.0][name], masks["lamp", 0.05][name])
    shrunk = masks["global", 0.05]["0.weight"]
    assert shrunk.float().mean() < 0.5 * masks["global", 1.0]["0.weight"].float().mean()


def test_lamp_keeps_every_layers_largest_weight_and_the_small_layers_denser() -> None:
    model = _model()
    pruner = GradualPruner(model, PruningConfig(final_sparsity=0.97, scope="lamp"))
    pruner.update_masks(0.97)
    for name, mask in pruner.masks.items():
        weight = pruner.params[name].detach().abs()
        assert mask.flatten()[weight.flatten().argmax()]
    density = {n: m.float().mean().item() for n, m in pruner.masks.items()}
    assert density["4.weight"] > density["2.weight"]  # 30 weights against 1,440


def _exact_lamp_kept(weight: torch.Tensor, all_weights: list[torch.Tensor],
                     sparsity: float) -> int:
    """Kept count of one layer under LAMP scored whole (the paper's definition)."""
    def scores(w: torch.Tensor) -> torch.Tensor:
        squares = torch.sort(w.detach().flatten().double().square()).values
        return squares / squares.flip(0).cumsum(0).flip(0)
    everything = torch.cat([scores(w) for w in all_weights])
    threshold = torch.kthvalue(everything, math.floor(sparsity * everything.numel())).values
    return int((scores(weight) > threshold).sum())


def test_lamp_allocation_on_a_sample_of_a_large_layer_matches_the_exact_one() -> None:
    """A layer over LAMP_SAMPLE live weights is scored on a strided sample; its share
    stays within 1% of the exact LAMP allocation and the total is exact."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(1024, 512), nn.Linear(512, 32), nn.Linear(32, 10))
    with torch.no_grad():
        model[0].weight.mul_(0.3)  # a scale global |w| would punish
    pruner = GradualPruner(model, PruningConfig(final_sparsity=0.9, scope="lamp"))
    weights = [pruner.params[n] for n in pruner.params]
    expected = {n: _exact_lamp_kept(pruner.params[n], weights, 0.9) for n in pruner.params}
    pruner.update_masks(0.9)
    total = sum(m.numel() for m in pruner.masks.values())
    assert total - sum(int(m.sum()) for m in pruner.masks.values()) == math.floor(0.9 * total)
    big = "0.weight"
    assert pruner.masks[big].numel() > 4 * LAMP_SAMPLE
    assert abs(int(pruner.masks[big].sum()) - expected[big]) <= 0.01 * expected[big]
    for name in ("1.weight", "2.weight"):  # exact below the sample size, up to the tie
        assert abs(int(pruner.masks[name].sum()) - expected[name]) <= 0.01 * expected[name] + 2


def test_ties_are_broken_deterministically_and_masks_only_shrink() -> None:
    model = nn.Linear(4, 4, bias=False)
    with torch.no_grad():
        model.weight.fill_(1.0)
    pruner = GradualPruner(model, PruningConfig(final_sparsity=0.75))
    pruner.update_masks(0.5)
    first = pruner.masks["weight"].clone()
    assert first.flatten().tolist() == [False] * 8 + [True] * 8  # lower flat index first
    with torch.no_grad():
        model.weight.mul_(first)
        model.weight[0, 0] = 5.0  # a pruned weight grows back (e.g. no gradient masking)
    pruner.update_masks(0.75)
    assert not pruner.masks["weight"][0, 0]  # still pruned
    assert (pruner.masks["weight"] <= first).all()


@pytest.mark.parametrize("optimizer_name", OPTIMIZERS)
def test_pruned_weights_and_optimizer_state_stay_exactly_zero(optimizer_name: str) -> None:
    model = _model()
    optimizer = build_optimizer(optimizer_name, model.parameters(), lr=0.1, momentum=0.9,
                                weight_decay=1e-2)
    pruner = GradualPruner(model, PruningConfig(final_sparsity=0.6))
    x, y = torch.randn(16, 1, 8, 8), torch.randint(0, 3, (16,))
    for step in range(6):
        if step == 2:
            pruner.update_masks(0.6)
            pruner.apply(optimizer)
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        pruner.mask_gradients()
        optimizer.step()
    for name, mask in pruner.masks.items():
        param = pruner.params[name]
        assert (param.detach()[~mask] == 0).all()
        state = optimizer.state[param]  # SGD's momentum buffer, AdamW's two moments
        assert {"momentum_buffer"} <= set(state) or {"exp_avg", "exp_avg_sq"} <= set(state)
        for value in state.values():
            if value.shape == param.shape:
                assert (value[~mask] == 0).all()
        assert (param.detach()[mask] != 0).any()
    assert pruner.density() == pytest.approx(0.4, abs=0.01)


def test_model_without_prunable_layers_is_refused() -> None:
    with pytest.raises(NothingToPruneError, match="no trainable weight matrix"):
        GradualPruner(nn.Sequential(nn.LayerNorm(4), nn.Embedding(3, 4)), PruningConfig())


def test_bad_schedule_is_refused() -> None:
    with pytest.raises(ValueError, match="final_sparsity"):
        PruningConfig(final_sparsity=1.0)
    with pytest.raises(ValueError, match="start_step <= end_step"):
        PruningConfig(start_step=5, end_step=1)


def test_state_dict_round_trip_restores_masks_and_position() -> None:
    source = GradualPruner(_model(), PruningConfig(final_sparsity=0.5, start_step=0,
                                                   end_step=10, frequency=5))
    assert source.maybe_update(5)
    target = GradualPruner(_model(seed=1), source.config)
    target.load_state_dict(source.state_dict())
    assert all(torch.equal(target.masks[n], source.masks[n]) for n in source.masks)
    assert target.last_update_step == 5 and not target.maybe_update(5)


def test_keep_mask_prunes_what_a_stable_sort_would_with_ties() -> None:
    """The linear-time selection (kthvalue + ties in index order) equals the stable
    argsort it replaced, including many equal scores and already pruned ones (-1)."""
    import math

    import torch

    from pactrain.pruning import GradualPruner

    generator = torch.Generator().manual_seed(0)
    for _ in range(200):
        n = int(torch.randint(1, 300, (1,), generator=generator))
        scores = torch.randint(-1, 6, (n,), generator=generator).float()
        sparsity = float(torch.rand(1, generator=generator))
        expected = torch.ones(n, dtype=torch.bool)
        n_prune = math.floor(sparsity * n)
        if n_prune:
            expected[torch.argsort(scores, stable=True)[:n_prune]] = False
        assert torch.equal(GradualPruner._keep_mask(scores, n_prune), expected)
