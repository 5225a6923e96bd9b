"""Frames from real sockets enter a plain forwarder on a real-time kernel at the current
virtual time, and under wall wire time with their InterestLifetime scaled for the PIT only
(:class:`dticn.emulation.ingress.SocketIngress`)."""

from __future__ import annotations

import asyncio

import pytest

from dticn.emulation.ingress import SocketIngress
from dticn.emulation.realtime import RealtimeDriver
from dticn.forwarder.face import RecordingFace
from dticn.forwarder.forwarder import Forwarder
from dticn.net.listen import ListenUri, open_listener
from dticn.packets import Interest, LpPacket, decode_packet, name_from_str
from dticn.sim.kernel import EventKernel

SCALE = 10.0
LIFETIME_MS = 2000


def _over_tcp(wire: bytes, wall_wire_scale: float | None) -> tuple[float, float, float, bytes]:
    """Send ``wire`` over TCP about 1 virtual second after the driver started; return the
    virtual time just before and after it was forwarded, the PIT in-record's expiry and
    the wire the forwarder relayed upstream."""

    async def main() -> tuple[float, float, float, bytes]:
        kernel = EventKernel()
        fw = Forwarder(kernel)
        driver = RealtimeDriver(kernel, time_scale=SCALE)
        SocketIngress(fw, driver, wall_wire_scale=wall_wire_scale)
        up = RecordingFace()
        fw.add_face(up)
        fw.add_route(name_from_str("/a"), up.face_id)
        where, close = await open_listener(fw, ListenUri.parse("tcp://127.0.0.1:0"))
        host, port = where.removeprefix("tcp://").rsplit(":", 1)
        driver.start()
        _reader, writer = await asyncio.open_connection(host, int(port))
        await asyncio.sleep(0.1)                       # the kernel has no event to run
        before = driver.now()
        writer.write(wire)
        await writer.drain()
        for _ in range(500):
            if up.sent:
                break
            await asyncio.sleep(0.01)
        after = driver.now()
        relayed = up.take()[0]
        entry = fw.pit.find(decode_packet(relayed))  # type: ignore[arg-type]
        assert entry is not None
        (record,) = entry.in_records.values()
        writer.close()
        close()
        driver.stop()
        return before, after, record.expiry, relayed

    return asyncio.run(main())


def _interest() -> bytes:
    return Interest(name_from_str("/a/1"), nonce=7, lifetime_ms=LIFETIME_MS).encode()


def test_a_socket_frame_is_processed_at_the_current_virtual_time() -> None:
    before, after, expiry, relayed = _over_tcp(_interest(), None)
    assert before >= 0.5                      # the kernel's own clock still said 0.0
    assert before + 2.0 <= expiry <= after + 2.0
    assert relayed == _interest()


@pytest.mark.parametrize("lp", [False, True], ids=["bare", "in-lp-packet"])
def test_wall_wire_time_scales_the_lifetime_for_the_pit_not_on_the_wire(lp: bool) -> None:
    wire = LpPacket(fragment=_interest()).encode() if lp else _interest()
    before, after, expiry, relayed = _over_tcp(wire, SCALE)
    assert before + 2.0 * SCALE <= expiry <= after + 2.0 * SCALE
    assert relayed == _interest()             # the wire goes on with its 2 s


def test_a_bad_scale_is_refused_with_the_fix() -> None:
    with pytest.raises(ValueError, match="time scale"):
        SocketIngress(Forwarder(EventKernel()), RealtimeDriver(EventKernel()),
                      wall_wire_scale=0)
