"""Adaptive tier policy: decisions follow the link model and density; refresh fits alpha-beta."""

import pytest

from pactrain.compression.communicator import Communicator
from pactrain.policy import AdaptivePolicy, ComputeCosts, FixedPolicy, LinkModel

COMPUTE = ComputeCosts(mask_s=1e-10, gather_s=2e-9, cast_s=1e-9, ternary_s=5e-9, pack_s=4e-9)


def test_slow_link_picks_packed_lanes_fast_link_picks_lossless() -> None:
    slow = AdaptivePolicy(LinkModel(1e-3, 1e-6), COMPUTE)  # ~1 MB/s
    decision = slow.decide(1_000_000, 200_000, 4)
    assert decision.tier == "packed"  # half the bytes of int8 ternary at 4 ranks
    assert decision.costs["packed"] < decision.costs["ternary"] < decision.costs["fp16"]
    without = AdaptivePolicy(LinkModel(1e-3, 1e-6), COMPUTE,
                             allowed=("dense", "fp32", "fp16", "ternary"))
    assert without.decide(1_000_000, 200_000, 4).tier == "ternary"
    fast = AdaptivePolicy(LinkModel(1e-5, 1e-11), COMPUTE)  # ~100 GB/s
    assert fast.decide(1_000_000, 1_000_000, 4).tier == "dense"  # nothing pruned
    assert fast.decide(1_000_000, 200_000, 4).tier in ("dense", "fp32")
    medium = AdaptivePolicy(LinkModel(1e-4, 1e-9), COMPUTE)  # ~1 GB/s
    decision = medium.decide(1_000_000, 200_000, 4)
    assert decision.costs[decision.tier] <= min(decision.costs["dense"],
                                                decision.costs["fp32"])
    assert decision.costs["fp32"] < decision.costs["dense"]  # compaction pays at 20% density


def test_lossy_tier_needs_a_clear_margin() -> None:
    link = LinkModel(1e-4, 1e-10)
    policy = AdaptivePolicy(link, COMPUTE, allowed=("fp32", "fp16"), lossy_margin=100.0)
    assert policy.decide(100_000, 50_000, 2).tier == "fp32"
    policy.lossy_margin = 1.0
    costs = policy.costs(100_000, 50_000, 2)
    expected = "fp16" if costs["fp16"] < costs["fp32"] else "fp32"
    assert policy.decide(100_000, 50_000, 2).tier == expected


def test_latency_bound_small_bucket_is_not_split_into_two_collectives() -> None:
    policy = AdaptivePolicy(LinkModel(5e-3, 1e-8), COMPUTE)
    assert policy.decide(1000, 200, 2).tier not in ("ternary", "packed")  # 2 x alpha


def test_hide_budget_buys_the_most_precise_tier_that_fits() -> None:
    # 100 Mbit/s-like link, 4 ranks, a 2.4M-entry bucket at 20% density
    policy = AdaptivePolicy(LinkModel(2e-4, 8e-8), COMPUTE)
    numel, kept = 2_400_000, 480_000
    costs = policy.costs(numel, kept, 4)
    assert policy.decide(numel, kept, 4).tier == "packed"  # no budget: the cheapest
    assert policy.decide(numel, kept, 4, costs["fp16"] * 1.01).tier == "fp16"
    assert policy.decide(numel, kept, 4, costs["fp32"] * 1.01).tier == "fp32"
    assert policy.decide(numel, kept, 4, costs["fp16"] * 0.99).tier == "packed"
    # planned budgets are hide_fraction x the gap; the group mean needs no group here
    policy.plan_overlap({0: 0.5, 1: 0.0}, Communicator())
    assert policy.hide_budget(0) == pytest.approx(0.4) and policy.hide_budget(1) == 0.0
    assert policy.hide_budget(7) == 0.0 and policy.version == 1
    other = AdaptivePolicy()
    other.load_state_dict(policy.state_dict())
    assert other.budgets_s == policy.budgets_s


def test_refresh_fits_alpha_beta_from_observations() -> None:
    truth = LinkModel(2e-4, 3e-8)
    policy = AdaptivePolicy(LinkModel(1e-3, 1e-6), COMPUTE, blend=1.0)
    for nbytes in (1_000, 10_000, 100_000, 1_000_000):
        for extra in (0.0, 1e-3, 5e-4):  # queueing delay only adds time
            policy.observe(nbytes, truth.all_reduce_time(nbytes, 1) + extra)
    policy.refresh(Communicator())
    assert policy.link.alpha_s == pytest.approx(truth.alpha_s, rel=1e-6)
    assert policy.link.beta_s_per_byte == pytest.approx(truth.beta_s_per_byte, rel=1e-6)
    assert policy.version == 1 and not policy.observations


def test_refresh_with_one_size_scales_the_model() -> None:
    policy = AdaptivePolicy(LinkModel(1e-4, 1e-9), COMPUTE, blend=1.0)
    predicted = policy.link.all_reduce_time(10_000, 1)
    policy.observe(10_000, 2 * predicted)
    policy.refresh(Communicator())
    assert policy.link.all_reduce_time(10_000, 1) == pytest.approx(2 * predicted)


def test_state_round_trip_and_validation() -> None:
    policy = AdaptivePolicy(LinkModel(1e-4, 2e-9), COMPUTE, version=3)
    other = AdaptivePolicy()
    other.load_state_dict(policy.state_dict())
    assert other.link == policy.link and other.compute == policy.compute and other.version == 3
    assert FixedPolicy("fp32").decide(10, 5, 2).tier == "fp32"
    with pytest.raises(ValueError, match="unknown"):
        AdaptivePolicy(allowed=("fp8",))


def test_a_refresh_probe_is_sized_to_the_link() -> None:
    """At 10 Mbit/s the start-up probe's 512 KB message took 0.6 s, four times a refresh;
    a refresh's message takes about REFRESH_PROBE_S on the link it believes in."""
    from pactrain.costs import LinkModel, ring_factor
    from pactrain.policy import (
        REFRESH_PROBE_ENTRIES,
        REFRESH_PROBE_S,
        refresh_probe_entries,
    )

    slow = LinkModel(alpha_s=0.005, beta_s_per_byte=1 / 1.25e6)  # 10 Mbit/s
    entries = refresh_probe_entries(slow, 4)
    seconds = 4 * ring_factor(4) * slow.beta_s_per_byte * entries
    assert seconds == pytest.approx(REFRESH_PROBE_S, rel=0.01)
    assert refresh_probe_entries(LinkModel(1e-5, 1e-12), 4) == REFRESH_PROBE_ENTRIES[1]
    assert refresh_probe_entries(LinkModel(1.0, 1e-3), 4) == REFRESH_PROBE_ENTRIES[0]
