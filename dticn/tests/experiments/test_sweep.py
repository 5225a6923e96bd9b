"""Sweep grids: parsing, order, the radio side growing with the grid (Ray: test_ray.py)."""

from __future__ import annotations

import pytest

from dticn.experiments.params import Experiment
from dticn.experiments.runner import run_many
from dticn.experiments.sweep import grid, parse_delay, parse_interval
from dticn.experiments.world import radio_scenario


def test_parse_interval_and_delay() -> None:
    assert parse_interval("50:70") == (50.0, 70.0)
    assert parse_interval("600") == (600.0, 600.0)
    assert parse_delay("20") == (0.02, 0.02)
    assert parse_delay("20:300") == (0.02, 0.3)
    with pytest.raises(ValueError, match="LOW:HIGH"):
        parse_interval("fast")


def test_grid_is_the_product_in_axis_order() -> None:
    points = grid({"config": ["rice", "push"], "nodes": [1, 10], "interval": ["50:70"],
                   "pattern": ["uniform"], "delay": ["20"], "sf": [7], "loss": [0.0]})
    assert [(p.config, p.nodes) for p in points] == [
        ("rice", 1), ("rice", 10), ("push", 1), ("push", 10)]
    exp = points[1].experiment(seed=3, duration_s=60.0)
    assert exp.nodes == 10 and exp.seed == 3 and exp.interval_s == (50.0, 70.0)
    with pytest.raises(ValueError, match="missing"):
        grid({"config": ["rice"]})
    assert {p.mac for p in points} == {"dsme"}          # left out: the paper's MAC


def test_grid_crosses_the_mac_axis() -> None:
    points = grid({"config": ["push"], "nodes": [1], "interval": ["50:70"],
                   "pattern": ["uniform"], "delay": ["20"], "sf": [7], "loss": [0.0],
                   "mac": ["dsme", "lorawan-a"]})
    assert [p.experiment(1, 60.0).mac for p in points] == ["dsme", "lorawan-a"]
    assert points[1].label()["mac"] == "lorawan-a"


def test_radio_side_grows_slots_for_high_sf_and_multisuperframes_for_many_nodes() -> None:
    assert (radio_scenario(Experiment()).so, radio_scenario(Experiment()).mo) == (3, 5)
    assert radio_scenario(Experiment(sf=12)).so > 3
    assert radio_scenario(Experiment(nodes=100)).mo > 5


def test_many_nodes_share_one_gateway() -> None:
    [row] = run_many([Experiment(config="push-draft", nodes=4, duration_s=600.0,
                                 warmup_s=90.0)], workers=1)
    assert row["items"] >= 4 * 8 and row["success_ratio"] == 1.0


def test_long_multisuperframes_stretch_lifetimes_warmup_and_tail() -> None:
    from dticn.experiments.world import World

    artifact = World(Experiment())
    assert artifact.context.lora_interest_lifetime_s == 64.0
    assert (artifact.warmup_s, artifact.horizon_s) == (120.0, 120.0 + 3600.0 + 160.0)
    big = World(Experiment(nodes=30, duration_s=60.0))
    msf = big.radio.ctx.mac.timing.multisuperframe_s
    assert msf > 60.0
    assert big.context.lora_interest_lifetime_s > 2 * msf
    assert big.gateway_fw.config.default_retx.pit_lifetime > 2 * msf
    assert big.node_fws[1].config.default_retx.pit_lifetime > 2 * msf
    assert big.warmup_s >= 3 * msf and big.horizon_s >= big.warmup_s + 60.0 + 3 * msf
