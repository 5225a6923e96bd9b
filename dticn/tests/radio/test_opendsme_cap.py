"""The CAP as openDSME runs it (inetrg/openDSME de04814, pinned by inetrg/dsme_lora e94c7e5),
the timing of the ``dsme-lora-sim`` plan: unslotted backoff in usable CAP time, one CCA,
``random(0 .. 2^BE - 1) + 1`` unit periods, 12 ms turnaround, 54 ms ACK wait."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dticn.mac.csma import Backoff, CsmaParams, SlottedCsmaCa, Transmit
from dticn.mac.dsme_config import MacConfig
from dticn.mac.timing import DsmeTiming
from dticn.radio.context import build_context
from dticn.radio.network import RadioNetwork
from dticn.radio.scenario import Scenario
from dticn.validation.opendsme_cap import COMPARISON

# SO 3: slots of 0.48 s, superframe 7.68 s, CAP [0.48, 4.32) s of each superframe.
TIMING = DsmeTiming()
TAIL = 0.15


def test_countdown_counts_from_now_on_no_boundary() -> None:
    assert TIMING.cap_countdown(1.003, 0.5, TAIL) == pytest.approx(1.503)
    # before the CAP (beacon slot): counted from the CAP's start
    assert TIMING.cap_countdown(0.0, 0.1, TAIL) == pytest.approx(0.58)
    # after the usable part (CFP): from the next CAP's start
    assert TIMING.cap_countdown(5.0, 0.2, TAIL) == pytest.approx(7.68 + 0.48 + 0.2)


def test_countdown_pauses_at_the_usable_end_and_carries_over() -> None:
    usable_end = 4.32 - TAIL
    assert TIMING.cap_countdown(4.0, usable_end - 4.0, TAIL) == pytest.approx(usable_end)
    # 0.17 s counted in this CAP, the other 0.33 s in the next one: no fresh draw
    assert TIMING.cap_countdown(4.0, 0.5, TAIL) == pytest.approx(7.68 + 0.48 + 0.33)
    # a wait longer than a whole usable CAP spans two superframes
    usable = 3.84 - TAIL
    assert TIMING.cap_countdown(0.48, usable + 0.2, TAIL) == pytest.approx(7.68 + 0.48 + 0.2)
    with pytest.raises(ValueError, match="never fits"):
        TIMING.cap_countdown(1.0, 0.1, 3.84)


@given(t_ms=st.integers(0, 40_000), wait_ms=st.integers(0, 20_000),
       tail_ms=st.integers(0, 3_000))
def test_countdown_lands_in_a_usable_part_no_earlier_than_the_wait(
        t_ms: int, wait_ms: int, tail_ms: int) -> None:
    t, wait, tail = t_ms / 1000, wait_ms / 1000, tail_ms / 1000
    when = TIMING.cap_countdown(t, wait, tail)
    start, end = TIMING.cap_window(int(when // TIMING.superframe_s))
    assert start - 1e-9 <= when <= end - tail + 1e-9
    assert when >= t + wait - 1e-9


def test_backoff_offset_and_single_cca() -> None:
    """CAPLayer.cc: ``aUnitBackoffPeriod * (random % 2^BE + 1)``; CCA success -> sending."""
    params = CsmaParams(min_be=2, max_be=2, contention_window=1, backoff_offset=1)
    draws = set()
    for seed in range(200):
        csma = SlottedCsmaCa(params, random.Random(seed))
        first = csma.start()
        assert isinstance(first, Backoff)
        draws.add(first.periods)
        assert isinstance(csma.on_cca(True), Transmit)
    assert draws == {1, 2, 3, 4}
    with pytest.raises(ValueError, match="contention_window"):
        CsmaParams(contention_window=0)
    with pytest.raises(ValueError, match="cap_access"):
        MacConfig(cap_access="aloha")


def test_dsme_lora_sim_plan_takes_opendsme_timing_and_others_keep_ours() -> None:
    mac = build_context(Scenario(nodes=2, cap_plan="dsme-lora-sim")).mac
    assert mac.cap_access == "opendsme"
    assert (mac.turnaround_s, mac.ack_wait_s) == (0.012, 0.054)  # dsme_phy_constants.h, PIBHelper
    assert (mac.csma.contention_window, mac.csma.backoff_offset) == (1, 1)
    for plan in ("model", "dsme-lora"):
        ours = build_context(Scenario(nodes=2, cap_plan=plan)).mac
        assert (ours.cap_access, ours.turnaround_s, ours.ack_wait_s) == ("slotted", 0.001, None)
        assert (ours.csma.contention_window, ours.csma.backoff_offset) == (2, 0)
    assert {s.name for s in COMPARISON} >= {"aUnitBackoffPeriod", "macAckWaitDuration"}


def test_opendsme_cap_never_defers_and_sends_inside_the_usable_cap() -> None:
    s = Scenario(nodes=40, duration_s=900.0, traffic="poisson:20s", slot="cap", radius_m=10,
                 rx_chains=8, engine="events", cap_plan="dsme-lora-sim")
    net = RadioNetwork(s)
    events = []
    for dev in net.devices.values():
        dev.observers.append(events.append)
    result = net.run()
    kinds = [e.kind for e in events]
    assert "cap_deferral" not in kinds and kinds.count("tx") > 500
    timing = net.ctx.mac.timing
    unit = timing.unit_backoff_s
    off_boundary = 0
    for e in events:
        if e.kind != "tx" or e.detail.get("slot") != "cap":
            continue
        start, end = timing.cap_window(int(e.time // timing.superframe_s))
        assert start <= e.time < end
        phase = ((e.time - start) / unit) % 1
        off_boundary += 1e-6 < phase < 1 - 1e-6
    assert off_boundary > 100  # unslotted: sends fall between backoff boundaries
    assert min(p for d in net.devices.values() for p in d.cap.backoff_log) >= 1
    assert result.summary()["delivery_ratio"] > 0.9
