"""The DSME coordinator as a core alone, on the fake platform: the test plays the nodes.

Expected times come from :mod:`dticn.mac.timing` and the MAC's settings, never typed in.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import pytest

from dticn.mac.coordinator import DsmeCoordinator
from dticn.mac.dsme_config import MacConfig
from dticn.mac.fake_platform import EventLog, FakeMedium, fake_platform
from dticn.mac.frames import BROADCAST, Frame, FrameKind
from dticn.mac.gts import Direction, GtsTable, allocate_first_fit
from dticn.mac.platform import MacRequest, Status
from dticn.phy.airtime import LoRaParams, time_on_air
from dticn.sim.kernel import EventKernel

NODE, GATEWAY = 1, 0
CFG = MacConfig.load()
toa = partial(time_on_air, LoRaParams(sf=7))
T = CFG.timing
MSF = T.multisuperframe_s



@dataclass
class Scene:
    clock: EventKernel
    gw: DsmeCoordinator
    medium: FakeMedium
    events: EventLog

    def from_node(self, kind: FrameKind, seq: int, *, at: float, channel: int,
                  payload: bytes = b"", ack_request: bool = False,
                  info: dict[str, object] | None = None, src: int = NODE) -> float:
        """A node's frame on air from ``at``; returns its end."""
        psdu = CFG.ack_bytes if kind is FrameKind.ACK else len(payload) + CFG.data_overhead
        if kind is FrameKind.ASSOCIATION_REQUEST:
            psdu = CFG.association_request_bytes
        frame = Frame(kind, src, GATEWAY, seq, psdu, payload, ack_request, info or {})
        return self.medium.send(frame, at=at, airtime_s=toa(psdu), channel=channel).end


def scene(*, beacons: bool = False) -> Scene:
    clock = EventKernel()
    medium = FakeMedium(clock)
    platform = fake_platform(medium, GATEWAY, seed=5, gateway=True)
    table = GtsTable(T, rx_chains=4)
    allocate_first_fit(table, [(NODE, Direction.UP), (NODE, Direction.DOWN)])
    gw = DsmeCoordinator(GATEWAY, platform, CFG, table, beacons=beacons)
    events = EventLog()
    gw.observers.append(events)
    medium.mac = gw
    gw.start()
    return Scene(clock, gw, medium, events)


def test_a_beacon_starts_every_beacon_interval() -> None:
    s = scene(beacons=True)
    s.clock.run(until=2 * T.beacon_interval_s)
    assert [x.time for x in s.medium.sent] == pytest.approx(
        [k * T.beacon_interval_s for k in range(3)])
    assert {(x.frame.kind, x.channel, x.dst) for x in s.medium.sent} == {
        (FrameKind.BEACON, CFG.beacon_channel, BROADCAST)}
    assert [x.frame.seq for x in s.medium.sent] == [0, 1, 2]


def test_it_listens_by_schedule_cap_and_uplink_cells_only() -> None:
    s = scene()
    (up,) = s.gw.table.of(NODE, Direction.UP)
    (down,) = s.gw.table.of(NODE, Direction.DOWN)
    cap_start, cap_end = T.cap_window(1)
    assert s.gw.listening(CFG.cap_channel, 7, cap_start)
    assert not s.gw.listening(CFG.cap_channel + 1, 7, cap_start)   # not the CAP channel
    assert not s.gw.listening(CFG.cap_channel, 8, cap_start)       # not its SF
    assert not s.gw.listening(CFG.cap_channel, 7, cap_end)         # the CAP is over
    assert s.gw.listening(up.channel, 7, up.offset(T) + MSF)
    assert not s.gw.listening(up.channel + 1, 7, up.offset(T))     # no cell on that channel
    assert not s.gw.listening(down.channel, 7, down.offset(T))     # downlink: no ACK awaited
    assert not s.gw.listening(CFG.beacon_channel, 7, 0.0)          # beacon slot


def test_downlink_goes_a_turnaround_into_the_node_slot_and_the_ack_delivers_it() -> None:
    s = scene()
    (down,) = s.gw.table.of(NODE, Direction.DOWN)
    results: list[MacRequest] = []
    s.gw.send(NODE, b"interest", on_result=results.append)
    sent = s.medium.run_until_sent(1)
    start = T.next_periodic(down.offset(T), MSF, CFG.turnaround_s) + CFG.turnaround_s
    assert (sent.time, sent.channel, sent.dst) == (pytest.approx(start), down.channel, NODE)
    assert s.gw.listening(down.channel, 7, sent.end + CFG.turnaround_s)   # awaits the ACK
    assert not s.gw.listening(down.channel, 7, sent.time + sent.airtime_s / 2)  # half duplex
    end = s.from_node(FrameKind.ACK, sent.frame.seq, at=sent.end + CFG.turnaround_s,
                      channel=down.channel)
    s.clock.run(until=end + 1.0)
    (req,) = results
    assert (req.status, req.attempts, req.finished) == (Status.DELIVERED, 1,
                                                        pytest.approx(end))
    assert len(s.gw.downlink_queues[NODE]) == 0


def test_downlink_without_ack_is_retried_a_multisuperframe_later_then_fails() -> None:
    s = scene()
    results: list[MacRequest] = []
    s.gw.send(NODE, b"interest", on_result=results.append)
    s.clock.run()
    attempts = 1 + CFG.csma.max_frame_retries
    first = s.medium.sent[0].time
    assert [x.time for x in s.medium.sent] == pytest.approx(
        [first + k * MSF for k in range(attempts)])
    assert len({x.frame.seq for x in s.medium.sent}) == 1
    window = 2 * CFG.turnaround_s + toa(CFG.ack_bytes)
    (req,) = results
    assert (req.status, req.attempts) == (Status.NO_ACK, attempts)
    assert req.finished == pytest.approx(s.medium.sent[-1].end + window)
    assert len(s.events.of("retry")) == CFG.csma.max_frame_retries


def test_uplink_data_is_acked_after_a_turnaround_and_a_duplicate_is_not_passed_up() -> None:
    s = scene()
    (up,) = s.gw.table.of(NODE, Direction.UP)
    got: list[tuple[int, bytes]] = []
    s.gw.on_receive = lambda src, payload, meta: got.append((src, payload))
    ends = [s.from_node(FrameKind.DATA, 3, at=up.offset(T) + k * MSF, channel=up.channel,
                        payload=b"reading", ack_request=True) for k in range(2)]
    s.clock.run(until=ends[-1] + 1.0)
    assert got == [(NODE, b"reading")] and len(s.events.of("duplicate")) == 1
    acks = s.medium.sent
    assert [x.time for x in acks] == pytest.approx([e + CFG.turnaround_s for e in ends])
    assert {(x.frame.kind, x.frame.seq, x.channel) for x in acks} == {
        (FrameKind.ACK, 3, up.channel)}
    assert s.gw.acks_sent == 2


def test_association_request_gets_cells_allocated_and_a_response_in_the_cap() -> None:
    s = scene()
    newcomer = 5
    cap_start, _ = T.cap_window(0)
    end = s.from_node(FrameKind.ASSOCIATION_REQUEST, 1, at=cap_start, channel=CFG.cap_channel,
                      ack_request=True, info={"directions": ["up", "down"]}, src=newcomer)
    ack = s.medium.run_until_sent(1)
    assert (ack.frame.kind, ack.dst, ack.time) == (FrameKind.ACK, newcomer,
                                                   pytest.approx(end + CFG.turnaround_s))
    cells = s.gw.table.by_device[newcomer]
    assert sorted(g.direction for g in cells) == [Direction.DOWN, Direction.UP]
    response = s.medium.run_until_sent(2)
    assert response.frame.kind is FrameKind.ASSOCIATION_RESPONSE
    assert (response.dst, response.channel) == (newcomer, CFG.cap_channel)
    assert response.frame.info == {"gts": cells}
    index = int(response.time // T.superframe_s)
    assert T.cap_window(index)[0] <= response.time < T.cap_window(index)[1]
