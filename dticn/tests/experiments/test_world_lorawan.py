"""The NDN schemes over LoRaWAN class A (issue 23, item 2): the same World, consumer and
schemes, with the edge's MAC switched (``Experiment(mac="lorawan-a")``).

What must hold: a pull scheme's Interest waits at the gateway for the node's next uplink
and goes down in RX1 after it; the node keeps alive so it can be asked; push rides the
uplink with no keep-alive; a frame over the receive window's payload limit is fragmented
by NDNLPv2 and reassembled; every frame (keep-alives included) is counted.
"""

from __future__ import annotations

import itertools

import pytest

from dticn.experiments.metrics import run_metrics
from dticn.experiments.params import Experiment
from dticn.experiments.world import World
from dticn.lora_edge import EDGE_PING_PERIODICITY, LORAWAN_REPORT_S, edge_lorawan_config
from dticn.mac.lorawan import BEACON_GUARD_S, BEACON_RESERVED_S, ping_slot_times


def run(**changes: object) -> tuple[World, dict]:
    world = World(Experiment(**{"seed": 2, "duration_s": 1200.0, "mac": "lorawan-a",
                                **changes}))
    world.run()
    return world, run_metrics(world)


def lora(metrics: dict, direction: str, kind: str) -> int:
    return metrics["packets_by_link"].get(f"lora:{direction}:{kind}", 0)


@pytest.mark.parametrize("config", ["v3-cr", "rice", "rice-schedule"])
def test_pull_interest_waits_for_the_next_uplink_and_goes_down_in_rx1(config: str) -> None:
    world, m = run(config=config)
    assert m["items"] >= 15 and m["success_ratio"] == 1.0, m["outcomes"]
    gw = world.radio.gateway.counters
    dev = world.radio.devices[1].counters
    # every Interest the gateway sent down (and the registration's ACK) went in RX1 after
    # one of the node's uplinks
    assert lora(m, "down", "interest") >= m["delivered"]
    assert gw.downlinks_rx1 == lora(m, "down", "interest") + lora(m, "down", "data")
    assert gw.downlinks_rx2 == gw.downlinks_deferred == 0
    # the node is reachable only because it keeps alive; its keep-alives are frames
    assert dev.empty_uplinks > 0
    assert world.mac.frames == dev.uplinks + gw.downlinks_rx1
    # a request waits at most one reporting period for its window, then the reply's uplink
    assert m["latency_p95_s"] <= LORAWAN_REPORT_S + 5.0


def test_schedule_hint_reads_the_next_uplink_and_beats_the_static_hint() -> None:
    _, static = run(config="rice")
    _, schedule = run(config="rice-schedule")
    # one LoRa Interest per item either way; the static hint waits a whole period
    for m in (static, schedule):
        assert m["success_ratio"] == 1.0
        assert lora(m, "down", "interest") == m["delivered"]
    assert static["latency_p50_s"] >= LORAWAN_REPORT_S
    assert schedule["latency_p50_s"] < 0.75 * static["latency_p50_s"]


def test_push_rides_the_uplink_without_keepalive() -> None:
    world, m = run(config="push-draft")
    dev = world.radio.devices[1].counters
    assert m["success_ratio"] == 1.0
    assert dev.empty_uplinks == 0                   # nothing waits for the node
    assert lora(m, "down", "interest") == 0          # no Interest crosses the LoRa link
    assert m["latency_p95_s"] < 2.0                  # no slot to wait for: ALOHA
    _, dsme = run(config="push-draft", mac="dsme")
    assert dsme["latency_p50_s"] > 5 * m["latency_p95_s"]


@pytest.mark.parametrize("config", ["v3-cr", "rice-schedule"])
def test_class_b_interest_goes_down_in_a_ping_slot_without_keepalive(config: str) -> None:
    world, m = run(config=config, mac="lorawan-b")
    assert m["success_ratio"] == 1.0, m["outcomes"]
    gw = world.radio.gateway.counters
    dev = world.radio.devices[1]
    assert dev.counters.empty_uplinks == 0          # the ping slots make it reachable
    assert gw.downlinks_ping >= m["delivered"]      # the Interests went down in ping slots
    assert dev.b.beacons_lost == 0 and dev.b.ping_slots_opened > 0
    assert world.mac.frames == dev.counters.uplinks + gw.downlinks_rx1 + gw.downlinks_ping
    # two frames per item (Interest down, Data up) against class A's keep-alives
    _, class_a = run(config=config)
    assert m["lora_frames_per_item"] < 0.7 * class_a["lora_frames_per_item"]
    # the ping offset moves every beacon period: two slots are at most two periods apart
    period = (1 << EDGE_PING_PERIODICITY) * 0.96
    assert m["latency_p95_s"] <= 2 * period + 5.0


def test_ping_slots_are_shared_spaced_and_inside_the_beacon_window() -> None:
    cfg = edge_lorawan_config()
    period = cfg.ping_period_s()
    for beacon in (128.0, 256.0):
        for address in (1, 2, 7):
            slots = ping_slot_times(cfg, beacon, address)
            assert slots == ping_slot_times(cfg, beacon, address)   # gateway == device
            assert len(slots) == 4                                   # 122.88 s / 30.72 s
            assert slots[0] >= beacon + BEACON_RESERVED_S
            assert slots[-1] + 0.03 <= beacon + cfg.beacon_period_s - BEACON_GUARD_S
            assert all(abs(b - a - period) < 1e-9 for a, b in itertools.pairwise(slots))
    offsets = {ping_slot_times(cfg, b, a)[0] - b for b in (128.0, 256.0, 384.0)
               for a in (1, 2, 3)}
    assert len(offsets) > 1                          # drawn per beacon and device


def test_frames_over_the_window_limit_are_fragmented_and_reassembled() -> None:
    # SF12 (DR0): 51-byte payloads; the registration ACK does not fit one downlink
    world, m = run(config="push-draft", sf=12, profile="artifact")
    assert world.gateway_faces[1].mtu == 51
    assert lora(m, "down", "fragment") >= 2
    assert m["success_ratio"] == 1.0                 # the node registered, then pushed
    # the second fragment came on FPending: the node asked for it with an empty uplink
    assert world.radio.devices[1].counters.empty_uplinks >= 1


def test_measured_energy_profile_follows_the_mac() -> None:
    _, m = run(config="push-draft", profile="artifact", duration_s=300.0)
    assert m["energy_profile"] == "casals-class-a"   # the artifact's dsme-lora, over LoRaWAN
    assert m["mac"] == "lorawan-a"
    assert m["lifetime_days_cap_rx_on"] == m["lifetime_days_cap_rx_off"] == m["lifetime_days"]


@pytest.mark.parametrize(("changes", "message"), [
    ({"mo": 5}, "no schedule to size"),
    ({"energy_profile": "dsme-lora"}, "measured on dsme"),
    ({"mac": "lorawan-c"}, "use one of"),
    ({"mac": "lorawan-b", "energy_profile": "casals-class-a"}, "measured on lorawan-a"),
])
def test_settings_lorawan_cannot_take_are_refused(changes: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Experiment(**{"mac": "lorawan-a", **changes})


def test_pcap_is_refused_over_lorawan(tmp_path) -> None:
    with pytest.raises(ValueError, match="pcap"):
        World(Experiment(mac="lorawan-a"), pcap=str(tmp_path / "run"))
    assert not list(tmp_path.iterdir())
