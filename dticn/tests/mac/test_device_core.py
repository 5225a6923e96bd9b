"""The DSME device as a core alone, on the fake platform: the test plays the medium.

Every expected time is built from :mod:`dticn.mac.timing` and the MAC's settings (so the
tests follow ``dsme.toml``), never typed in.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import pytest

from dticn.energy.model import EnergyMeter
from dticn.mac.device import DsmeDevice
from dticn.mac.dsme_config import MacConfig
from dticn.mac.fake_platform import EventLog, FakeMedium, Sent, fake_platform
from dticn.mac.frames import BROADCAST, Frame, FrameKind
from dticn.mac.gts import Direction, Gts
from dticn.mac.platform import RECEPTION_MARGIN_S, MacRequest, Status
from dticn.mac.states import GtsState, SyncState
from dticn.mac.upkeep import UPKEEP
from dticn.phy.airtime import LoRaParams, time_on_air
from dticn.phy.radio_states import RadioState
from dticn.sim.kernel import EventKernel

NODE, GATEWAY = 1, 0
CFG = MacConfig.load()
toa = partial(time_on_air, LoRaParams(sf=7))
T = CFG.timing
UP = Gts(0, 1, 2, NODE, Direction.UP)
DOWN = Gts(0, 0, 3, NODE, Direction.DOWN)
STANDBY, RX, TX, SLEEP = RadioState.STANDBY, RadioState.RX, RadioState.TX, RadioState.SLEEP



@dataclass
class Scene:
    clock: EventKernel
    dev: DsmeDevice
    medium: FakeMedium
    events: EventLog
    meter: EnergyMeter

    def beacon(self, at: float) -> None:
        frame = Frame(FrameKind.BEACON, GATEWAY, BROADCAST, 0, CFG.beacon_bytes)
        self.medium.send(frame, at=at, airtime_s=toa(CFG.beacon_bytes),
                      channel=CFG.beacon_channel)

    def ack(self, sent: Sent, *, at: float | None = None) -> None:
        frame = Frame(FrameKind.ACK, GATEWAY, NODE, sent.frame.seq, CFG.ack_bytes)
        self.medium.send(frame, at=sent.end + CFG.turnaround_s if at is None else at,
                      airtime_s=toa(CFG.ack_bytes), channel=sent.channel)


def scene(*, upkeep: str = "closed", association: str = "static",
          cells: tuple[Gts, ...] = (UP,), **changes: object) -> Scene:
    clock = EventKernel()
    medium = FakeMedium(clock)
    platform = fake_platform(medium, NODE, seed=3)
    meter = EnergyMeter()
    dev = DsmeDevice(NODE, GATEWAY, platform, CFG.with_(**changes), meter=meter,
                     upkeep=upkeep, association=association,
                     gts_directions=("up", "down"))
    if association == "static":
        dev.install_gts(list(cells))
    events = EventLog()
    dev.observers.append(events)
    medium.mac = dev
    dev.start()
    return Scene(clock, dev, medium, events, meter)


def assert_log(log: list[tuple[float, RadioState, int | None]],
               expected: list[tuple[float, RadioState, int | None]]) -> None:
    assert [(s, ch) for _, s, ch in log] == [(s, ch) for _, s, ch in expected]
    assert [t for t, _, _ in log] == pytest.approx([t for t, _, _ in expected], abs=1e-9)


LEAD = CFG.beacon_guard_s + CFG.wakeup_s
BI = T.beacon_interval_s
MSF = T.multisuperframe_s


# -- beacon tracking -------------------------------------------------------------------
def test_beacon_window_opens_a_guard_before_the_beacon_and_closes_when_it_ends() -> None:
    s = scene(upkeep="events")
    s.beacon(at=BI)
    s.clock.run(until=BI + 1.0)
    ch, end = CFG.beacon_channel, BI + toa(CFG.beacon_bytes)
    assert_log(s.medium.log, [(BI - LEAD, STANDBY, None), (BI - CFG.beacon_guard_s, RX, ch),
                             (end, STANDBY, None), (end, SLEEP, None)])
    assert s.dev.missed_beacons == 0 and s.dev.sync is SyncState.TRACKING
    assert s.clock.peek() == pytest.approx(2 * BI - LEAD)      # the next window


def test_a_missed_beacon_closes_the_window_after_beacon_and_guard() -> None:
    s = scene(upkeep="events")
    s.clock.run(until=BI + 1.0)
    close = BI + toa(CFG.beacon_bytes) + CFG.beacon_guard_s
    assert [t for t, state, _ in s.medium.log if state is SLEEP] == pytest.approx([close])
    assert [e.detail for e in s.events.of("beacon_lost")] == [{"missed": 1}]
    assert s.dev.sync is SyncState.TRACKING and s.dev.lost_beacons == 1


def test_max_lost_beacons_lose_sync_then_a_beacon_resynchronises_and_frees_the_queue() -> None:
    s = scene(upkeep="events")
    k = CFG.max_lost_beacons
    lost_at = k * BI + toa(CFG.beacon_bytes) + CFG.beacon_guard_s
    s.clock.run(until=lost_at + 1.0)
    assert s.dev.sync is SyncState.LOST and s.dev.sync_losses == 1
    assert s.dev.lost_beacons == k
    assert s.medium.log[-1] == (pytest.approx(lost_at), RX, CFG.beacon_channel)   # scanning
    results: list[MacRequest] = []
    s.dev.send(GATEWAY, b"queued", on_result=results.append)
    s.clock.run(until=(k + 1) * BI - 1.0)
    assert s.medium.sent == []                     # no slot is used while out of sync
    found = (k + 1) * BI + toa(CFG.beacon_bytes)
    s.beacon(at=(k + 1) * BI)
    s.clock.run(until=found)
    assert s.dev.sync is SyncState.TRACKING and len(s.events.of("resynchronised")) == 1
    sent = s.medium.run_until_sent(1)
    assert sent.time == pytest.approx(T.next_periodic(UP.offset(T), MSF, found + CFG.wakeup_s))


# -- association -------------------------------------------------------------------------
def _associating(s: Scene) -> float:
    """Beacon found, association request sent and acknowledged; returns the ACK's end."""
    s.beacon(at=0.5)
    request = s.medium.run_until_sent(1)
    assert request.frame.kind is FrameKind.ASSOCIATION_REQUEST
    assert (request.channel, request.dst) == (CFG.cap_channel, GATEWAY)
    assert request.frame.info == {"directions": ["up", "down"]}
    cap_start, cap_end = T.cap_window(int(request.time // T.superframe_s))
    assert cap_start <= request.time and request.end <= cap_end
    s.ack(request)
    acked = request.end + CFG.turnaround_s + toa(CFG.ack_bytes)
    s.clock.run(until=acked)
    assert s.dev.sync is SyncState.ASSOCIATING and s.dev.gts_state is GtsState.REQUESTED
    assert s.medium.log[-1] == (pytest.approx(acked), RX, CFG.cap_channel)
    return acked


def test_association_handshake_installs_the_cells_and_starts_tracking() -> None:
    s = scene(association="handshake")
    assert_log(s.medium.log, [(0.0, STANDBY, None), (0.0, RX, CFG.beacon_channel)])
    acked = _associating(s)
    response = Frame(FrameKind.ASSOCIATION_RESPONSE, GATEWAY, NODE, 7,
                     CFG.association_response_bytes, ack_request=True,
                     info={"gts": [UP, DOWN]})
    tx = s.medium.send(response, at=acked + 1.0, airtime_s=toa(CFG.association_response_bytes),
                    channel=CFG.cap_channel)
    s.clock.run(until=tx.end + 1.0)
    ack = s.medium.sent[-1]
    assert (ack.frame.kind, ack.frame.seq, ack.channel) == (FrameKind.ACK, 7, CFG.cap_channel)
    assert ack.time == pytest.approx(tx.end + CFG.turnaround_s)
    assert s.dev.sync is SyncState.TRACKING and s.dev.gts_state is GtsState.ALLOCATED
    assert (s.dev.uplink, s.dev.downlink) == ([UP], [DOWN])
    assert s.dev.tracking_since == pytest.approx(
        tx.end + 2 * CFG.turnaround_s + toa(CFG.ack_bytes))
    assert [e.detail for e in s.events.of("associated")] == [{"cells": 2}]


def test_no_association_response_within_the_wait_time_scans_again() -> None:
    s = scene(association="handshake")
    acked = _associating(s)
    s.clock.run(until=acked + CFG.response_wait_s)
    assert len(s.events.of("association_failed")) == 1
    assert s.events.of("association_failed")[0].time == pytest.approx(acked + CFG.response_wait_s)
    assert s.dev.sync is SyncState.UNASSOCIATED and s.dev.gts_state is GtsState.NONE
    assert s.medium.log[-1] == (pytest.approx(acked + CFG.response_wait_s), RX,
                               CFG.beacon_channel)


# -- uplink GTS ------------------------------------------------------------------------
def _first_slot() -> float:
    return T.next_periodic(UP.offset(T), MSF, CFG.wakeup_s)


def test_gts_frame_goes_at_the_slot_start_and_the_ack_delivers_it() -> None:
    s = scene()
    results: list[MacRequest] = []
    s.dev.send(GATEWAY, b"reading", on_result=results.append)
    slot = _first_slot()
    sent = s.medium.run_until_sent(1)
    assert (sent.time, sent.channel, sent.dst) == (pytest.approx(slot), UP.channel, GATEWAY)
    assert sent.frame.psdu_bytes == len(b"reading") + CFG.data_overhead
    assert sent.airtime_s == toa(sent.frame.psdu_bytes) and sent.frame.ack_request
    s.ack(sent)
    s.clock.run()
    ack_end = sent.end + CFG.turnaround_s + toa(CFG.ack_bytes)
    assert_log(s.medium.log, [(slot - CFG.wakeup_s, STANDBY, None), (slot, TX, UP.channel),
                             (sent.end, RX, UP.channel), (ack_end, STANDBY, None),
                             (ack_end, SLEEP, None)])
    (req,) = results
    assert (req.status, req.attempts) == (Status.DELIVERED, 1)
    assert req.finished == pytest.approx(ack_end)


def test_gts_retries_in_later_slots_with_the_same_frame_then_gives_up() -> None:
    s = scene()
    subband = s.dev.p.duty.plan.subband(UP.channel)
    psdu = 7 + CFG.data_overhead
    assert toa(psdu) / subband.duty_cycle < MSF     # the off-time never skips a slot here
    results: list[MacRequest] = []
    s.dev.send(GATEWAY, b"reading", on_result=results.append)
    s.clock.run()
    attempts = 1 + CFG.csma.max_frame_retries
    sent = s.medium.sent
    assert [x.time for x in sent] == pytest.approx([_first_slot() + k * MSF
                                                    for k in range(attempts)])
    assert len({x.frame.seq for x in sent}) == 1
    window = 2 * CFG.turnaround_s + toa(CFG.ack_bytes)
    assert [e.time for e in s.events.of("retry")] == pytest.approx([x.end + window
                                                                for x in sent[:-1]])
    (req,) = results
    assert (req.status, req.attempts) == (Status.NO_ACK, attempts)
    assert req.finished == pytest.approx(sent[-1].end + window)
    assert s.dev.p.radio.state is SLEEP


def test_an_ack_still_arriving_when_the_window_closes_is_awaited() -> None:
    s = scene()
    results: list[MacRequest] = []
    s.dev.send(GATEWAY, b"late", on_result=results.append)
    sent = s.medium.run_until_sent(1)
    late = sent.end + 2 * CFG.turnaround_s + toa(CFG.ack_bytes) / 2
    s.ack(sent, at=late)
    s.clock.run(until=sent.end + 1.0)
    assert results[0].status is Status.DELIVERED
    assert results[0].finished == pytest.approx(late + toa(CFG.ack_bytes))


# -- listen windows (upkeep="events") -------------------------------------------------------
def test_downlink_window_opens_at_the_cell_every_multisuperframe() -> None:
    s = scene(upkeep="events", cells=(UP, DOWN))
    s.clock.run(until=2 * MSF)
    window = CFG.gts_rx_window_s
    for k in range(2):
        t0 = DOWN.offset(T) + k * MSF
        got = s.medium.states_between(t0 - CFG.wakeup_s - 1e-9, t0 + window + 1e-9)
        assert [state for _, state, _ in got] == [STANDBY, RX, STANDBY, SLEEP]
        assert [t for t, _, _ in got] == pytest.approx(
            [t0 - CFG.wakeup_s, t0, t0 + window, t0 + window])
        assert got[1][2] == DOWN.channel


def test_a_frame_arriving_as_the_downlink_window_closes_keeps_it_open_and_is_acked() -> None:
    s = scene(upkeep="events", cells=(UP, DOWN))
    got: list[bytes] = []
    s.dev.on_receive = lambda src, payload, meta: got.append(payload)
    payload = bytes(40)
    frame = Frame(FrameKind.DATA, GATEWAY, NODE, 9, len(payload) + CFG.data_overhead,
                  payload, ack_request=True)
    start = DOWN.offset(T) + CFG.gts_rx_window_s / 2
    tx = s.medium.send(frame, at=start, airtime_s=toa(frame.psdu_bytes), channel=DOWN.channel)
    assert tx.end > DOWN.offset(T) + CFG.gts_rx_window_s
    s.clock.run(until=tx.end + 1.0)
    assert got == [payload]
    sleeps = [t for t, state, _ in s.medium.log if state is SLEEP]
    assert sleeps[0] == pytest.approx(tx.end + RECEPTION_MARGIN_S)
    (ack,) = s.medium.sent
    assert (ack.frame.kind, ack.frame.seq) == (FrameKind.ACK, 9)
    assert ack.time == pytest.approx(tx.end + CFG.turnaround_s)


def test_cap_listening_covers_the_cap_of_every_superframe() -> None:
    s = scene(upkeep="events", cap_rx=True)
    s.clock.run(until=2 * T.superframe_s)
    rx = [(t, ch) for t, state, ch in s.medium.log if state is RX]
    sleeps = [t for t, state, _ in s.medium.log if state is SLEEP]
    caps = [T.cap_window(i) for i in range(2)]
    assert rx == [(pytest.approx(a), CFG.cap_channel) for a, _ in caps]
    assert sleeps == pytest.approx([b for _, b in caps])


# -- upkeep strategy ---------------------------------------------------------------------
def test_upkeep_strategies_are_a_registry_and_a_wrong_name_names_them() -> None:
    assert set(UPKEEP) == {"closed", "events"}
    with pytest.raises(ValueError, match="'closed', 'events'"):
        scene(upkeep="hourly")


def test_closed_form_upkeep_never_wakes_the_node_but_hears_in_its_windows() -> None:
    s = scene(upkeep="closed", cells=(UP, DOWN), cap_rx=True)
    s.clock.run(until=2 * BI)
    assert s.medium.log == [] and s.clock.peek() is None
    t0, window = DOWN.offset(T) + MSF, CFG.gts_rx_window_s
    assert s.dev.listening(DOWN.channel, 7, t0 + window / 2)
    assert not s.dev.listening(DOWN.channel, 7, t0 + window + 1e-3)
    assert not s.dev.listening(DOWN.channel, 8, t0)                 # other SF
    cap_start, cap_end = T.cap_window(3)
    assert s.dev.listening(CFG.cap_channel, 7, cap_start)
    assert not s.dev.listening(CFG.cap_channel, 7, cap_end)


def test_closed_form_upkeep_books_rx_beyond_the_downlink_window() -> None:
    s = scene(upkeep="closed", cells=(UP, DOWN))
    payload = bytes(60)
    frame = Frame(FrameKind.DATA, GATEWAY, NODE, 4, len(payload) + CFG.data_overhead, payload)
    t0 = DOWN.offset(T)
    tx = s.medium.send(frame, at=t0, airtime_s=toa(frame.psdu_bytes), channel=DOWN.channel)
    s.clock.run(until=tx.end)
    assert s.medium.heard == [tx]
    assert s.meter.time_s["rx"] == pytest.approx(tx.end - t0 - CFG.gts_rx_window_s)


def test_closed_form_upkeep_hears_nothing_before_association() -> None:
    s = scene(upkeep="closed", association="handshake", cap_rx=True)
    s.dev.p.radio.sleep()
    assert not s.dev.listening(CFG.cap_channel, 7, T.cap_window(1)[0])


def test_closed_form_cap_time_held_by_own_transactions_is_counted_once() -> None:
    s = scene(upkeep="closed", cap_rx=True)
    results: list[MacRequest] = []
    s.dev.send(GATEWAY, b"cap", slot="cap", on_result=results.append)
    sent = s.medium.run_until_sent(1)
    s.ack(sent)
    s.clock.run()
    assert results[0].status is Status.DELIVERED
    awake, since = 0.0, None
    for t, state, _ in s.medium.log:
        if state is SLEEP and since is not None:
            awake, since = awake + t - since, None
        elif state is not SLEEP and since is None:
            since = t
    assert awake > 0 and s.dev.cap_held_s == pytest.approx(awake)
