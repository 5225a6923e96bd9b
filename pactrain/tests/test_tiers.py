"""The tier registry: one module per tier, read by the policy, the methods, the names and
the docs table."""

import importlib
from pathlib import Path

import pytest
import torch

from pactrain.compression.compressors import chunk_abs_max, scale_chunks
from pactrain.costs import ComputeCosts, LinkModel
from pactrain.methods import get_method
from pactrain.names import METHOD_NAMES
from pactrain.policy import AdaptivePolicy, precision_levels
from pactrain.tiers import (
    FALLBACK_TIER,
    TIER_NAMES,
    all_tiers,
    get_tier,
    method_name,
    nonary,
    quinary,
)
from pactrain.tiers.base import TierContext
from pactrain.tiers.table import block, current_block

DOCS = Path(__file__).resolve().parents[2] / "docs" / "pactrain-core.md"


def test_every_registered_name_is_a_module_declaring_that_tier() -> None:
    for name in TIER_NAMES:
        module = importlib.import_module(f"pactrain.tiers.{name}")
        assert module.TIER.name == name
        assert module.TIER.compacts == (name != FALLBACK_TIER)
    with pytest.raises(ValueError, match=r"unknown tier 'int4'.*dense, fp32"):
        get_tier("int4")


def test_methods_names_and_docs_follow_the_registry() -> None:
    assert current_block(DOCS.read_text(encoding="utf-8")) == block(), (
        "docs/pactrain-core.md's tier table is not the registry's; regenerate it: "
        "python -m pactrain.tiers.table --write docs/pactrain-core.md")
    for tier in all_tiers().values():
        if tier.name == FALLBACK_TIER:
            continue
        spec = get_method(method_name(tier.name))
        assert spec.name in METHOD_NAMES
        assert spec.lossy == tier.lossy and spec.max_world_size == tier.max_world_size
        assert "send_density" in spec.options


def test_prices_are_the_alpha_beta_time_of_the_declared_bytes() -> None:
    link = LinkModel(alpha_s=1e-3, beta_s_per_byte=1e-8)
    free = ComputeCosts(0.0, 0.0, 0.0, 0.0, 0.0)
    ring = 2 * 3 / 4
    packed, dense = get_tier("packed"), get_tier("dense")
    # 10,000 entries of which 1,000 travel at N = 4: 400 B of digits + 4 scales x 4 B,
    # two collectives (MAX of the scales, SUM of the words)
    assert packed.price(link, free, 10_000, 1_000, 4) == pytest.approx(
        2e-3 + 1e-8 * ring * 416)
    assert dense.price(link, free, 10_000, 1_000, 4) == pytest.approx(1e-3 + 1e-8 * ring * 40_000)
    policy = AdaptivePolicy(link=link, compute=free)
    assert set(policy.costs(10_000, 1_000, 4)) == set(policy.allowed)
    assert "bf16" not in policy.allowed  # not an adaptive default
    levels = precision_levels()
    assert levels[0] == {"dense", "fp32"} and levels[-1] == {"ternary", "packed"}
    assert "quinary" not in policy.allowed  # taken only when forced (pactrain-quinary)
    assert "nonary" not in policy.allowed


#: The multi-level code tiers, each with its levels a side.
LEVEL_TIERS = [pytest.param(quinary, 2, id="quinary"), pytest.param(nonary, 4, id="nonary")]


def _codes_context(uniform: torch.Tensor, bounds: tuple[tuple[int, int], ...],
                     scales: torch.Tensor) -> TierContext:
    """A context whose scales are agreed already (so no collective runs)."""
    return TierContext(comm=None, world_size=4, scale_group=None, bounds=bounds,
                       draws=lambda: uniform.clone(), wants_error=True, scales=scales)


@pytest.mark.parametrize(("tier", "levels"), LEVEL_TIERS)
def test_level_codes_are_unbiased_within_their_levels_and_keep_their_error(tier, levels) -> None:
    generator = torch.Generator().manual_seed(5)
    values = torch.randn(300, generator=generator)
    values[256:] = 0.0  # a chunk of zeros: scale 0, codes 0, no NaN
    bounds = ((0, 300),)
    scales = chunk_abs_max(values, bounds)
    assert scales[1] == 0
    step = scales / levels
    total, draws = torch.zeros(300), 2000
    for _ in range(draws):
        codes, factors, error = tier.encode(
            _codes_context(torch.rand(300, generator=generator), bounds, scales),
            values.clone())
        assert int(codes.abs().max()) <= levels and codes[256:].abs().sum() == 0
        delivered = codes.to(torch.float32)
        delivered[:256] *= step[0]
        assert torch.allclose(error, values - delivered, atol=1e-6)  # what is kept
        assert torch.equal(factors, step / 4)
        total += delivered
    # unbiased: the mean of the delivered values approaches the values
    assert torch.allclose(total / draws, values, atol=4 * float(step[0]) / draws ** 0.5)
    top = int(values[:256].abs().argmax())
    assert codes[top] == levels * torch.sign(values[top])  # |v| = scale: always the top code


@pytest.mark.parametrize(("tier", "levels"), LEVEL_TIERS)
def test_level_codes_nearest_rounding_is_within_half_a_level(tier, levels) -> None:
    generator = torch.Generator().manual_seed(6)
    values = torch.randn(512, generator=generator)
    bounds = ((0, 200), (200, 512))
    scales = chunk_abs_max(values, bounds)
    codes, _, error = tier.encode(
        _codes_context(torch.full((512,), 0.5), bounds, scales), values.clone())
    steps = scale_chunks(torch.ones(512), scales / levels, bounds)
    assert bool((error.abs() <= steps / 2 + 1e-6).all())
    assert int(codes.abs().max()) == levels
