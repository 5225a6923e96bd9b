"""Pieces of the validation report that need no simulation: their Fig. 22 layout and its
link budget under FLoRa's channel (docs/dticn-validation.md)."""

from __future__ import annotations

import numpy as np
import pytest

from dticn.radio.topology import concentric_positions
from dticn.validation.fig22 import fig22_link_budget


def test_concentric_rings_as_inet_places_them() -> None:
    pos = concentric_positions(315, 10.0)
    radius = np.hypot(*pos.T)
    assert radius[0] == 0.0
    # ring k holds floor(2 pi k) hosts: 6, 12, 18, 25, ...
    for k, first, count in ((1, 1, 6), (2, 7, 12), (3, 19, 18), (4, 37, 25)):
        assert np.allclose(radius[first: first + count], 10.0 * k)
    assert radius.max() == pytest.approx(100.0)            # 315 hosts: ten rings
    assert np.hypot(*concentric_positions(115, 10.0).T).max() == pytest.approx(60.0)


def test_link_budget_far_sinks_lose_frames_before_contention() -> None:
    small, large = fig22_link_budget(100), fig22_link_budget(300)
    assert small["max_distance_m"] < 121 < large["max_distance_m"] <= 200.0
    assert small["delivered_within_attempts"] > 0.95
    assert 0.6 < large["delivered_within_attempts"] < 0.8
    assert large["frame_and_ack"] < large["frame_reaches_sink"] < 1.0


def test_rings_topology_puts_the_gateway_on_their_sinks_arc() -> None:
    from dticn.phy.config import load_phy_config
    from dticn.phy.propagation import LogDistancePathLoss
    from dticn.radio.topology import GATEWAY, Topology

    path_loss = LogDistancePathLoss.from_config(load_phy_config(None))
    topo = Topology.rings(300, 10.0, path_loss, seed=1, shadowing=False)
    hosts = concentric_positions(315, 10.0)
    assert np.allclose(topo.positions[0], hosts[307])            # the middle of 15 sinks
    assert np.allclose(topo.positions[1:], hosts[:300])
    assert np.hypot(*topo.positions[0]) == pytest.approx(100.0)
    far = max(range(1, 301), key=lambda i: topo.loss_db(GATEWAY, i))
    assert topo.loss_db(GATEWAY, far) > topo.loss_db(GATEWAY, 1)  # sources beyond the centre


def test_flora_phy_reading_reaches_the_medium_and_the_mac() -> None:
    """with_flora_phy: the event engine's medium judges with FLoRa's rule and every frame
    lasts as in their simulator; the scenario (and so pinned results) is untouched."""
    from dticn.phy.airtime import LoRaParams, time_on_air
    from dticn.phy.collision import FloraCollision
    from dticn.radio.context import build_context, with_flora_phy
    from dticn.radio.network import RadioNetwork
    from dticn.radio.scenario import Scenario

    s = Scenario(nodes=3, duration_s=120.0, traffic="poisson:40s", slot="cap",
                 cap_plan="dsme-lora", payload_bytes=16, radius_m=10.0, engine="events")
    plain = build_context(s)
    assert plain.collision is None and plain.phy.rule == "semtech"
    ctx = with_flora_phy(build_context(s), collision="flora", airtime="flora")
    psdu = 16 + ctx.mac.data_overhead
    assert ctx.data_toa_s == time_on_air(LoRaParams(sf=7, rule="flora"), psdu)
    assert ctx.data_toa_s > plain.data_toa_s and ctx.ack_toa_s > plain.ack_toa_s
    net = RadioNetwork(s, ctx)
    assert isinstance(net.medium.collision, FloraCollision)
    result = net.run()
    assert result.summary()["generated"] > 0
    with pytest.raises(ValueError, match="unknown collision rule"):
        with_flora_phy(build_context(s), collision="aloha")


def test_peer_to_peer_sinks_receive_and_ack_their_sources() -> None:
    """Their 15-sink layout: the coordinator at the centre only beacons; each source's CAP
    frames go to its own sink, which ACKs them, and deliveries are counted there."""
    from dticn.radio.context import build_context
    from dticn.radio.network import RadioNetwork
    from dticn.radio.scenario import Scenario
    from dticn.radio.topology import Topology

    nodes, sinks = 12, 3
    s = Scenario(nodes=nodes, duration_s=900.0, traffic="poisson:60s", slot="cap",
                 cap_plan="dsme-lora", payload_bytes=16, radius_m=10.0, engine="events",
                 shadowing=False)
    ctx = build_context(s)
    ctx.topology = Topology.rings_with_sinks(nodes, 10.0, ctx.topology.path_loss, s.seed,
                                             sinks=sinks, shadowing=False)
    hosts = concentric_positions(nodes + sinks, 10.0)
    assert np.allclose(ctx.topology.positions[0], 0.0)            # coordinator, centre
    assert np.allclose(ctx.topology.positions[1:], hosts)         # sources, then sinks
    ctx.sink_of = {i: nodes + 1 + (i % sinks) for i in range(1, nodes + 1)}
    net = RadioNetwork(s, ctx)
    assert sorted(net.sinks) == [13, 14, 15]
    result = net.run()
    summary = result.summary()
    assert summary["generated"] > 0
    assert summary["delivered"] >= 0.9 * summary["generated"]     # short, clean links
    assert net.gateway.acks_sent == 0                             # nothing sent to it
    assert sum(sink.acks_sent for sink in net.sinks.values()) >= summary["delivered"]


def test_rerun_missing_keeps_rows_it_has_and_orders_them_as_the_table() -> None:
    from dticn.validation import rerun
    from dticn.validation.cap_gap import TABLES

    keys = [d.key for table, _ in TABLES for d in table]
    assert len(set(keys)) == len(keys)
    titles = {d.key: d.title for table, _ in TABLES for d in table}
    # rows stored with ids, and rows of a report written before ids (found by their title)
    stored = {key: ({"id": key} if k % 2 else {"setting": titles[key]}) | {"kept": True}
              for k, key in enumerate(keys)}
    steps: list[str] = []
    doc = rerun({"quick": False, "sections": {}, "fig22_sensitivity":
                 list(reversed(stored.values()))}, ["fig22-sensitivity-missing"], steps.append)
    assert doc["fig22_sensitivity"] == [stored[key] for key in keys]
    assert all(r["kept"] for r in doc["fig22_sensitivity"]) and steps == []
    with pytest.raises(ValueError, match="cannot rerun table5"):
        rerun(doc, ["table5"])


def test_page_shows_their_cap_timing_and_judges_it_from_the_numbers() -> None:
    """The comparison table prints every setting with its file; the verdict follows the
    measured rows (the committed report's, and a made-up one within 10 points)."""
    import copy
    import json
    from pathlib import Path

    from dticn.validation import markdown
    from dticn.validation.opendsme_cap import COMPARISON

    path = Path(__file__).parents[2] / "benchmarks/results/dticn-validation.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    page = markdown(doc, command="dticn validate")
    assert "## Fig. 22: the CAP as their simulation ran it" in page
    for setting in COMPARISON:
        assert f"| {setting.name} | {setting.theirs} |" in page
    assert "inetrg/openDSME de04814, mac_services/pib/dsme_phy_constants.h" in page
    assert "the Fig. 22 CAP target stays unmet" in page
    close = copy.deepcopy(doc)
    for row in close["fig22_sensitivity"]:
        if row["id"] == "disc-opendsme":
            for v in row["points"].values():
                v["delivery"] = v["theirs"] + 0.05
            row["max_gap_points"] = 5.0
    assert "No faithful CAP setting" not in markdown(close, command="dticn validate")
