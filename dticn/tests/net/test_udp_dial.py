"""Dialing a peer over UDP (``--route PREFIX=udp://...``): the route face exists before the
peer has sent anything, carries Interests both ways, and is never closed as idle."""

from __future__ import annotations

import asyncio
import socket

import pytest

from dticn.forwarder.face import FaceScope, RecordingFace
from dticn.forwarder.forwarder import Forwarder
from dticn.net.asyncio_clock import AsyncioClock
from dticn.net.listen import ListenUri, open_connection
from dticn.net.stream import UdpFace, UdpProtocol
from dticn.packets import Interest, decode_packet, name_from_str


def test_dialed_udp_face_routes_and_stays() -> None:
    async def run() -> tuple[bytes, int, bool, FaceScope]:
        loop = asyncio.get_running_loop()
        peer = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        peer.bind(("127.0.0.1", 0))
        peer.setblocking(False)
        port = peer.getsockname()[1]
        fw = Forwarder(AsyncioClock())
        face = await open_connection(fw, ListenUri.parse(f"udp://127.0.0.1:{port}"))
        assert isinstance(face, UdpFace)
        fw.add_route(name_from_str("/far"), face.face_id)
        # sweeping with a tiny idle timeout must not close the dialed face
        sweeper = UdpProtocol(fw, idle_timeout=0.0)
        sweeper._faces[face.addr] = face
        sweeper._schedule_sweep()
        interest = Interest(name_from_str("/far/x"), lifetime_ms=1000, nonce=7)
        src = RecordingFace("app://consumer", scope=FaceScope.LOCAL)
        fw.add_face(src)
        src.deliver(interest.encode())      # forwarded toward the dialed face
        wire = await asyncio.wait_for(loop.sock_recv(peer, 2048), 5)
        await asyncio.sleep(0.05)
        alive = face.face_id in fw.faces
        if sweeper._sweeper is not None:
            sweeper._sweeper.cancel()
        peer.close()
        return wire, face.face_id, alive, face.scope

    wire, face_id, alive, scope = asyncio.run(run())
    packet = decode_packet(wire)
    assert isinstance(packet, Interest) and packet.name == name_from_str("/far/x")
    assert face_id >= 256 and alive and scope is FaceScope.NON_LOCAL


def test_dialing_an_unknown_scheme_names_the_accepted_ones() -> None:
    async def run() -> None:
        await open_connection(Forwarder(AsyncioClock()), ListenUri("sctp", "h", 1))

    with pytest.raises(ValueError, match="udp://"):
        asyncio.run(run())
