"""LoRaWAN class A on the shared medium: windows, ACKs, retransmissions, half duplex."""

from __future__ import annotations

import math

import pytest

from dticn.mac.lorawan_config import LorawanConfig, data_rate
from dticn.phy.airtime import LoRaParams, time_on_air
from dticn.radio.lorawan_network import LorawanNetwork
from dticn.radio.scenario import Scenario
from dticn.radio.topology import GATEWAY


def _run(**changes: object) -> LorawanNetwork:
    base = dict(nodes=1, duration_s=3600.0, traffic="periodic:600s", payload_bytes=8,
                mac="lorawan-a")
    base.update(changes)
    net = LorawanNetwork(Scenario(**base))  # type: ignore[arg-type]
    net.run()
    return net


def test_eu868_settings_come_from_the_config() -> None:
    cfg = LorawanConfig.load()
    assert cfg.channels_hz[:3] == (868.1e6, 868.3e6, 868.5e6)
    assert [cfg.max_payload(sf) for sf in (12, 11, 10, 9, 8, 7)] == [51, 51, 51, 115, 242, 242]
    assert data_rate(12) == 0 and data_rate(7) == 5
    # LoRaMac-node's window rule: 24 symbols at SF7, the 6-symbol floor at SF12.
    assert cfg.rx_window_s(7) == pytest.approx(24 * 2**7 / 125e3)
    assert cfg.rx_window_s(12) == pytest.approx(6 * 2**12 / 125e3)
    assert cfg.ping_period_s() == pytest.approx(128 * 0.96)
    plan = cfg.channel_plan(3, _eu_subbands(), 125e3)
    assert plan.frequency(3) == 869.525e6
    assert plan.subband(3).duty_cycle == 0.1 and plan.subband(0).duty_cycle == 0.01


def _eu_subbands():
    from dticn.phy.channels import ChannelPlan
    return ChannelPlan.from_config().subbands


def test_unconfirmed_uplink_opens_both_windows_and_sleeps_between() -> None:
    net = _run()
    dev = net.devices[1]
    c = dev.counters
    assert c.uplinks == 6 and net.gateway.counters.received == 6
    cfg = net.ctx.config
    # Nothing answers, so every uplink listens through RX1 and RX2 for their timeouts.
    per_uplink = cfg.rx_window_s(7) + cfg.rx_window_s(12)
    assert c.rx_window_s == pytest.approx(6 * per_uplink, rel=1e-6)
    # ...and waits the rest of RECEIVE_DELAY2 (+ the RX2 window) with the radio asleep.
    assert c.rx_wait_s + c.rx_window_s == pytest.approx(
        6 * (cfg.receive_delay2_s + cfg.rx_window_s(12) - net.devices[1]._lead_s(
            12, cfg.rx_window_s(12))), rel=1e-6)
    meter = net.meters[1]
    assert meter.time_s["rx"] == pytest.approx(c.rx_window_s, rel=1e-6)
    toa = time_on_air(LoRaParams(sf=7), 8 + 13)
    assert meter.tx_time_s[14.0] == pytest.approx(6 * toa)
    lat = net.result().nodes[0].latencies_s
    assert lat == pytest.approx([toa] * 6)


def test_confirmed_uplink_is_acked_in_rx1_and_skips_rx2() -> None:
    net = _run(confirmed=True)
    c = net.devices[1].counters
    gw = net.gateway.counters
    assert c.acked == 6 and c.downlinks == 6 and gw.acks_rx1 == 6 and gw.acks_rx2 == 0
    ack_toa = time_on_air(LoRaParams(sf=7, crc=False), 12)
    # RX1 stayed open to the end of the ACK; RX2 never opened.
    assert c.rx_window_s < 6 * (net.ctx.config.rx_window_s(7) + ack_toa + 2e-3)
    assert gw.downlink_airtime_s == pytest.approx(6 * ack_toa)


def test_gateway_duty_cycle_moves_acks_to_rx2_then_drops_them() -> None:
    # 20 nodes confirming at SF12 as often as their own 1% allows (one ~1.2 s uplink per
    # ~2 min): 600 ACKs of ~1 s an hour, but RX1's 1% sub-band holds 36 s and RX2's 10%
    # holds 360 s, so ACKs move to RX2, then are refused, and devices retransmit.
    net = _run(nodes=20, duration_s=3600.0, traffic="periodic:60s", sf=12, payload_bytes=8,
               confirmed=True, enforce_duty_cycle=True, channels=3)
    gw = net.gateway.counters
    assert gw.acks_rx1 > 0 and gw.acks_rx2 > 0 and gw.acks_dropped > 0
    assert net.gateway.duty.violations == 0
    per_band = net.gateway.duty.duty_cycle(3600.0)
    assert per_band["h1.7 869.4-869.65 MHz"] <= 0.1 + 1e-9
    # The hourly rule lets the last ACK start just under the budget (one ACK over at most).
    ack_toa = time_on_air(LoRaParams(sf=12, crc=False), 12)
    assert per_band["h1.5 868.0-868.6 MHz"] <= 0.01 + ack_toa / 3600 + 1e-9
    assert sum(d.counters.retransmissions for d in net.devices.values()) > 0


def test_confirmed_uplink_without_ack_is_sent_eight_times_then_failed() -> None:
    # A gateway that listens on no uplink channel hears nothing, so answers nothing.
    net = LorawanNetwork(Scenario(nodes=1, duration_s=120.0, payload_bytes=8,
                                  mac="lorawan-a", confirmed=True, enforce_duty_cycle=False))
    net.gateway.uplink_channels = 0          # the gateway listens on no uplink channel
    net.devices[1].send(GATEWAY, bytes(8))   # one item, no traffic generator
    net.kernel.run(until=120.0)
    c = net.devices[1].counters
    assert c.uplinks == 8 and c.retransmissions == 7 and c.failed == 1 and c.acked == 0
    assert net.result().nodes[0].failed == 1 and net.devices[1].pending == 0


def test_gateway_is_deaf_while_it_transmits() -> None:
    net = _run(nodes=60, duration_s=600.0, traffic="poisson:5s", confirmed=True,
               enforce_duty_cycle=False, channels=1)
    gw = net.gateway.counters
    assert gw.acks_rx1 > 0 and gw.lost_half_duplex > 0


def test_node_duty_cycle_spaces_uplinks() -> None:
    # SF12 frames of 21 B take about 1.2 s: at 1% one channel allows one every ~120 s.
    net = _run(duration_s=1200.0, traffic="periodic:10s", sf=12, channels=1)
    dev = net.devices[1]
    assert dev.counters.duty_deferrals > 0 and dev.duty.violations == 0
    toa = time_on_air(LoRaParams(sf=12), 21)
    assert dev.counters.uplinks <= math.ceil(1200.0 / (toa / 0.01)) + 1
    assert dev.counters.queue_drops > 0        # the queue of 8 overflows meanwhile


def test_lorawan_and_dsme_see_the_same_items() -> None:
    from dticn.radio.engines import run
    s = Scenario(nodes=3, duration_s=3600.0, traffic="poisson:300s", payload_bytes=8)
    dsme = run(s)
    lorawan = run(s.with_(mac="lorawan-a"))
    assert [n.generated for n in dsme.nodes] == [n.generated for n in lorawan.nodes]


def test_refusals_name_the_fix() -> None:
    with pytest.raises(ValueError, match="51-byte maximum at DR0"):
        LorawanNetwork(Scenario(mac="lorawan-a", sf=12, payload_bytes=52))
    with pytest.raises(ValueError, match="measured on dsme"):
        Scenario(mac="lorawan-a", energy_profile="dsme-lora")
    with pytest.raises(ValueError, match="LoRaWAN setting"):
        Scenario(confirmed=True)
    with pytest.raises(ValueError, match="use one of dsme, lorawan-a"):
        Scenario(mac="lorawan-c")
    from dticn.radio.engines import run
    with pytest.raises(ValueError, match="engine='events'"):
        run(Scenario(mac="lorawan-a", engine="batch"))


def test_class_b_hears_every_beacon_and_opens_its_ping_slots() -> None:
    net = _run(nodes=3, duration_s=3600.0, mac="lorawan-b", confirmed=True)
    cfg = net.ctx.config
    beacons = int(3600.0 // cfg.beacon_period_s)
    assert net.gateway.beacons_sent == beacons
    for dev in net.devices.values():
        b = dev.b  # type: ignore[attr-defined]
        assert b.beacons_received + b.windows_skipped >= beacons - 1
        assert b.beacons_lost == 0 and b.ping_slots_opened > 0
        assert dev.counters.acked == dev.counters.uplinks   # uplinks still confirmed
    a = _run(nodes=3, duration_s=3600.0, confirmed=True)
    # The beacon and ping windows cost receive time class A does not spend...
    assert net.meters[1].time_s["rx"] > a.meters[1].time_s["rx"] + 0.5 * beacons * 0.1
    # ...and the beacons are gateway airtime in the 10% sub-band.
    duty = net.result().gateway["duty_cycle_by_subband"]
    assert duty["h1.7 869.4-869.65 MHz"] > 0


def test_class_b_keeps_uplinks_out_of_the_beacon_guard() -> None:
    starts: list[float] = []
    net2 = LorawanNetwork(Scenario(nodes=1, duration_s=3600.0, payload_bytes=8,
                                   traffic="poisson:20s", mac="lorawan-b",
                                   enforce_duty_cycle=False))
    net2.medium.observers.append(
        lambda what, tx, rx: starts.append(tx.start) if what == "transmit" and tx.sender == 1
        else None)
    net2.run()
    period = net2.ctx.config.beacon_period_s
    assert net2.devices[1].counters.uplinks > 50
    for t in (t for t in starts if t > period - 3.0):     # from the first beacon's guard on
        phase = t % period
        assert not (phase > period - 3.0 or phase < 2.12 - 1e-9), t
