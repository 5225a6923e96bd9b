"""AsyncioClock (scaled real time) and the UDP face, in-process on loopback."""

from __future__ import annotations

import asyncio
import socket

from dticn.clock import Clock
from dticn.forwarder.forwarder import Forwarder
from dticn.net.asyncio_clock import AsyncioClock
from dticn.net.daemon import serve
from dticn.packets import LpPacket, NackReason, decode_packet


def test_asyncio_clock_scales_time() -> None:
    async def run() -> tuple[float, float, list[float]]:
        clock = AsyncioClock(time_scale=100.0)
        assert isinstance(clock, Clock)
        fired: list[float] = []
        done = asyncio.Event()
        handle = clock.call_later(5.0, lambda: (fired.append(clock.now()), done.set()))
        cancelled = clock.call_later(1.0, fired.append, -1.0)
        cancelled.cancel()
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        await asyncio.wait_for(done.wait(), 2.0)
        return loop.time() - t0, handle.when, fired

    wall, when, fired = asyncio.run(run())
    assert wall < 3.0  # 5 clock seconds at 100x: 0.05 s wall (slack for a loaded host)
    # asyncio may run a timer up to its clock resolution early, hence 4.99
    assert abs(when - 5.0) < 0.5 and len(fired) == 1 and fired[0] >= 4.99


def test_udp_face_answers_nack_for_no_route() -> None:
    async def run() -> bytes:
        stop = asyncio.Event()
        bound: list[str] = []
        ready = asyncio.Event()

        def on_ready(uris: list[str]) -> None:
            bound.extend(uris)
            ready.set()

        task = asyncio.create_task(serve(["udp://127.0.0.1:0"], ready=on_ready, stop=stop))
        await asyncio.wait_for(ready.wait(), 5)
        port = int(bound[0].rsplit(":", 1)[1])
        loop = asyncio.get_running_loop()
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.setblocking(False)
        sock.connect(("127.0.0.1", port))
        sock.send(b"\x05\x01")  # garbage first: dropped, face stays
        sock.send(bytes.fromhex("050b07030801610a0400000001"))
        reply = await asyncio.wait_for(loop.sock_recv(sock, 2048), 5)
        sock.close()
        stop.set()
        fw: Forwarder = await task
        assert fw.counters.drops["malformed"] == 1
        return reply

    nack = decode_packet(asyncio.run(run()))
    assert isinstance(nack, LpPacket) and nack.nack_reason == NackReason.NO_ROUTE


def test_idle_udp_faces_are_closed() -> None:
    from dticn.net.stream import UdpProtocol

    async def run() -> tuple[int, int]:
        fw = Forwarder(AsyncioClock())
        loop = asyncio.get_running_loop()
        transport, _ = await loop.create_datagram_endpoint(
            lambda: UdpProtocol(fw, idle_timeout=0.2), local_addr=("127.0.0.1", 0)
        )
        port = transport.get_extra_info("sockname")[1]
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.sendto(b"\x05\x01", ("127.0.0.1", port))
        await asyncio.sleep(0.1)
        before = len(fw.faces)
        await asyncio.sleep(0.5)
        after = len(fw.faces)
        sock.close()
        transport.close()
        return before, after

    before, after = asyncio.run(run())
    assert (before, after) == (1, 0)
