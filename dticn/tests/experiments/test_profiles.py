"""The artifact profile and our model side by side (issue 13, items 1 and 3)."""

from __future__ import annotations

import pytest

from dticn.edge_profiles import ARTIFACT, MODEL, get_profile
from dticn.experiments.params import Experiment
from dticn.experiments.runner import run_one
from dticn.experiments.world import World


def test_profiles_are_found_by_name_and_name_their_differences() -> None:
    assert get_profile("artifact") is ARTIFACT and get_profile(MODEL) is MODEL
    with pytest.raises(KeyError, match="known: model, artifact"):
        get_profile("nope")
    assert set(ARTIFACT.differences(MODEL)) == {
        "allocator", "enforce_duty_cycle", "hint_s", "static_routes", "item_payload_bytes",
        "item_empty_signature", "reflexive_lifetime_s", "forward_retransmissions",
        "energy_profile"}


@pytest.mark.parametrize("config", ["v2-cr", "v3-inr", "rice"])
def test_artifact_profile_one_lora_interest_per_item_and_rows_name_it(config: str) -> None:
    row = run_one(Experiment(config=config, seed=1, duration_s=1800.0, profile="artifact"))
    assert row["profile"] == "artifact" and row["cap_rx"] is False
    assert row["success_ratio"] == 1.0
    assert row["lora_interests_per_item"] == 1.0        # CCN-lite aggregation, no /reg
    assert row["lifetime_days_cap_rx_on"] < row["lifetime_days_cap_rx_off"] / 10


def test_artifact_items_and_static_routes() -> None:
    world = World(Experiment(config="rice", seed=1, duration_s=600.0, profile="artifact"))
    assert not world.edge.registers and world.context.registered   # static FIB /xid
    item = world.nodes[1].content((*world.nodes[1].prefix, b"\x08\x011"))
    wire = item.encode()
    assert len(item.content) == 4 and wire.endswith(b"\x17\x00")  # empty DigestSha256
    world.run()
    assert world.scheme.registrations == 0                         # type: ignore[attr-defined]


def test_cap_rx_is_selectable_and_shown() -> None:
    row = run_one(Experiment(config="push", seed=1, duration_s=600.0, cap_rx=True))
    assert row["profile"] == "model" and row["cap_rx"] is True
    assert row["lifetime_days"] == pytest.approx(row["lifetime_days_cap_rx_on"])
    assert row["lifetime_days_cap_rx_off"] > 10 * row["lifetime_days"]
