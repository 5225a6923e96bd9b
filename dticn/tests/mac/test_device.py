"""The DSME device and coordinator wired through the simulated medium."""

import pytest

from dticn.mac.frames import Frame, FrameKind
from dticn.mac.gts import Direction
from dticn.mac.platform import MacRequest, Status
from dticn.mac.states import SyncState
from dticn.radio.network import RadioNetwork
from dticn.radio.scenario import Scenario

QUIET = Scenario(nodes=2, duration_s=600.0, traffic="periodic:600s", shadowing=False,
                 radius_m=50.0)


def _net(**changes: object) -> RadioNetwork:
    net = RadioNetwork(QUIET.with_(**changes), traffic=False)
    net.start()
    return net


def test_cap_frame_without_ack_is_retried_max_frame_retries_times() -> None:
    net = _net()
    dev = net.devices[1]
    results: list[MacRequest] = []
    dev.send(99, b"x" * 10, slot="cap", on_result=results.append)   # nobody answers
    net.kernel.run(until=120.0)
    (req,) = results
    assert req.status is Status.NO_ACK
    assert req.attempts == 1 + net.ctx.mac.csma.max_frame_retries


def test_channel_access_failure_after_max_backoffs_on_a_jammed_channel() -> None:
    net = _net()
    jam = Frame(FrameKind.DATA, 2, 99, 1, 20)
    net.kernel.call_at(0.4, net.medium.transmit, 2, 99, 0, 7, 14.0, jam, 30.0)  # 30 s on ch 0
    results: list[MacRequest] = []
    net.kernel.call_at(0.5, lambda: net.devices[1].send(0, b"hi", slot="cap",
                                                        on_result=results.append))
    net.kernel.run(until=30.0)
    (req,) = results
    assert req.status is Status.CHANNEL_ACCESS_FAILURE
    cap = net.devices[1].cap
    assert len(cap.backoff_log) == net.ctx.mac.csma.max_backoffs + 1
    for i, periods in enumerate(cap.backoff_log):   # BE = 3, 4, 5, 5, 5
        assert periods < 2 ** min(3 + i, 5)


def test_gts_uplink_is_sent_in_the_node_slot_and_acknowledged() -> None:
    net = _net()
    dev = net.devices[1]
    got: list[tuple[int, bytes, float]] = []
    net.gateway.on_receive = lambda src, p, meta: got.append((src, p, meta.time))
    results: list[MacRequest] = []
    net.kernel.run(until=10.0)
    slot = dev.next_slot_time(Direction.UP, 10.0)
    assert slot == net.gateway.next_slot_time(1, "up", 10.0)
    dev.send(0, b"reading", on_result=results.append)
    net.kernel.run(until=100.0)
    assert results[0].status is Status.DELIVERED and results[0].attempts == 1
    assert got == [(1, b"reading", pytest.approx(slot + dev.toa(len(b"reading") + 11)))]


def test_downlink_gts_delivery_and_schedule_hint() -> None:
    net = _net(downlink_gts=True, upkeep="events")
    got: list[float] = []
    net.devices[2].on_receive = lambda src, p, meta: got.append(meta.time)
    net.kernel.run(until=100.0)
    hint = net.gateway.next_slot_time(2, "down", after=100.0)
    results: list[MacRequest] = []
    net.gateway.send(2, b"interest", on_result=results.append)
    net.kernel.run(until=300.0)
    assert results[0].status is Status.DELIVERED
    assert hint is not None and hint < got[0] < hint + net.ctx.mac.timing.slot_s


def test_payload_over_the_psdu_is_refused_with_the_fix() -> None:
    net = _net()
    with pytest.raises(ValueError, match="fragment above the MAC"):
        net.devices[1].send(0, bytes(200))
    assert net.devices[1].max_payload == 116


def test_lost_beacons_lead_to_sync_loss_and_rescan() -> None:
    net = _net(upkeep="events")
    net.kernel.run(until=40.0)
    dev = net.devices[1]
    net.medium.link_loss_db = lambda a, b: 500.0   # the gateway becomes inaudible
    net.kernel.run(until=40.0 + 5 * 30.72)
    assert dev.lost_beacons >= net.ctx.mac.max_lost_beacons
    assert dev.sync is SyncState.LOST and dev.sync_losses == 1
    net.medium.link_loss_db = net.ctx.topology.loss_db
    net.kernel.run(until=40.0 + 8 * 30.72)
    assert dev.sync is SyncState.TRACKING


def test_association_handshake_allocates_gts() -> None:
    net = _net(association="handshake", nodes=3, downlink_gts=True, rx_chains=4)
    net.kernel.run(until=200.0)
    for dev in net.devices.values():
        assert dev.sync is SyncState.TRACKING
        assert len(dev.uplink) == 1 and len(dev.downlink) == 1
    assert len(net.gateway.table.cells) == 6
