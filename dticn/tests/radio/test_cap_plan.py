"""CAP plans and contention as DSME-LoRa runs them (issue 16, item 2)."""

from __future__ import annotations

import random

import pytest

from dticn.mac.csma import CsmaParams, SlottedCsmaCa
from dticn.radio.cap_plan import CAP_PLANS, get_cap_plan
from dticn.radio.context import build_context
from dticn.radio.network import RadioNetwork
from dticn.radio.scenario import Scenario


def test_dsme_lora_plan_puts_beacons_and_cap_in_the_10_percent_band() -> None:
    ctx = build_context(Scenario(nodes=2, cap_plan="dsme-lora"))
    ch = ctx.mac.cap_channel
    assert ch == ctx.mac.beacon_channel == 16
    assert ctx.plan.frequency(ch) == 869.525e6
    assert ctx.plan.subband(ch).duty_cycle == 0.1
    assert ctx.node_duty_rule == "window" and ctx.mac.cap_queue_limit == 8
    ours = build_context(Scenario(nodes=2))
    assert ours.mac.cap_channel == 0 and ours.plan.subband(0).duty_cycle == 0.01
    assert ours.node_duty_rule == "off-time" and ours.mac.cap_queue_limit is None
    with pytest.raises(ValueError, match="known: model, dsme-lora, dsme-lora-sim"):
        get_cap_plan("nope")
    assert set(CAP_PLANS) == {"model", "dsme-lora", "dsme-lora-sim"}


def test_deferral_backoff_keeps_nb_and_draws_from_the_current_window() -> None:
    csma = SlottedCsmaCa(CsmaParams(min_be=3, max_be=5), random.Random(1))
    csma.start()
    csma.on_cca(False)                   # busy: NB 1, BE 4
    draws = {csma.deferral_backoff().periods for _ in range(200)}
    assert csma.nb == 1 and draws <= set(range(16)) and len(draws) > 8


def test_deferred_frames_back_off_at_the_next_cap() -> None:
    """Under load frames are deferred to the next CAP; each deferral draws a backoff."""
    s = Scenario(nodes=40, duration_s=900.0, traffic="poisson:20s", slot="cap", radius_m=10,
                 rx_chains=8, engine="events", cap_plan="dsme-lora")
    net = RadioNetwork(s)
    kinds: list[str] = []
    for dev in net.devices.values():
        dev.observers.append(lambda e, k=kinds: k.append(e.kind))
    result = net.run()
    assert kinds.count("cap_deferral") > 0
    logged = sum(len(d.cap.backoff_log) for d in net.devices.values())
    assert logged >= kinds.count("cap_deferral") + kinds.count("tx")
    assert result.summary()["delivery_ratio"] > 0.8


def test_cap_queue_limit_drops_and_counts() -> None:
    s = Scenario(nodes=1, duration_s=60.0, slot="cap", radius_m=10, engine="events",
                 cap_plan="dsme-lora")
    net = RadioNetwork(s, traffic=False)
    net.start()
    net.kernel.run(until=1.0)
    dev = net.devices[1]
    for k in range(12):
        dev.send(0, bytes([k]) * 8, slot="cap")
    assert dev.queue_drops == 12 - 8
    result = net.result()
    assert result.nodes[0].queue_drops == 4 and result.summary()["queue_drops"] == 4


def test_unconfirmed_cap_frames_get_no_ack_and_no_retry() -> None:
    s = Scenario(nodes=3, duration_s=1800.0, traffic="poisson:60s", slot="cap", radius_m=10,
                 engine="events", cap_ack=False)
    result = RadioNetwork(s).run()
    assert result.summary()["retries"] == 0 and result.gateway["acks"] == 0
    assert result.summary()["delivery_ratio"] > 0.9


def test_cad_miss_probability_is_a_checked_setting() -> None:
    with pytest.raises(ValueError, match="cad_miss_prob"):
        Scenario(cad_miss_prob=1.5)
    s = Scenario(nodes=20, duration_s=600.0, traffic="poisson:20s", slot="cap", radius_m=10,
                 engine="events", cad_miss_prob=1.0)
    assert build_context(s).mac.cad_miss_prob == 1.0
    net = RadioNetwork(s)
    kinds: list[str] = []
    for dev in net.devices.values():
        dev.observers.append(lambda e, k=kinds: k.append(e.kind))
    net.run()
    assert "cca_busy" not in kinds


def test_dsme_lora_sim_plan_takes_their_simulation_csma_settings() -> None:
    """DSME-LoRa's Fig. 22 simulation (inetrg/dsme_lora, simulations/common.ini): macMinBE 7,
    macMaxBE 8, macMaxCSMABackoffs 5; the other plans keep dsme.toml's."""
    csma = build_context(Scenario(nodes=2, cap_plan="dsme-lora-sim")).mac.csma
    assert (csma.min_be, csma.max_be, csma.max_backoffs, csma.max_frame_retries) == (7, 8, 5, 3)
    base = build_context(Scenario(nodes=2, cap_plan="dsme-lora")).mac.csma
    assert (base.min_be, base.max_be, base.max_backoffs) == (3, 5, 4)
