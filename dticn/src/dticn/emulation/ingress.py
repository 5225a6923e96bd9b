"""Where frames from the emulated gateway's sockets enter its forwarder.

The gateway's forwarder runs on the kernel that the real-time driver keeps in step with the
wall clock (:class:`~dticn.emulation.realtime.RealtimeDriver`). Its simulated faces (LoRa,
the gateway's own applications) deliver inside kernel events; its socket faces
(:class:`~dticn.net.stream.StreamFace`, :class:`~dticn.net.stream.UdpFace`) deliver from
asyncio callbacks, between kernel events. Every frame from a socket face:

1. runs through :meth:`RealtimeDriver.external`: the kernel first runs every event due by
   the current virtual time and moves its clock there, so the frame is processed at the
   right time; afterwards the driver re-arms its timer (the pipeline may have scheduled an
   event earlier than the one it waited for);
2. with ``wall_wire_scale`` (``dticn gateway --wire-time wall``: times on the wire are wall
   seconds, the kernel's are emulated seconds ``wall_wire_scale`` times faster), has the
   InterestLifetime of an Interest multiplied by it for the PIT before the forwarder sees
   it; the relayed wire is unchanged. The wait hints the gateway's scheme answers with are
   divided by the same scale where they are made
   (:meth:`dticn.schemes.gateway_base.GatewayContext.on_wire`). Each gateway converts only what
   crosses its own sockets or what it generates, so chains of gateways never convert twice.

A socket face is taken over at its first frame: :class:`SocketIngress` is one of the
forwarder's face taps (``Forwarder.face_taps``, installed on every face added later), and
when a socket face received its first frame it makes :meth:`SocketIngress.receive` that
face's receiver. :meth:`dticn.forwarder.face.Face.deliver` calls the receiver after its
taps, so that first frame already enters here. The forwarder itself is a plain
:class:`~dticn.forwarder.forwarder.Forwarder`, the one the simulator runs.
"""

from __future__ import annotations

from weakref import WeakSet

from dticn.emulation.realtime import RealtimeDriver
from dticn.forwarder.face import Face
from dticn.forwarder.forwarder import Forwarder
from dticn.net.stream import StreamFace, UdpFace
from dticn.packets import DecodeError, Interest, LpPacket, decode_packet

SOCKET_FACES = (StreamFace, UdpFace)
"""Faces whose frames come from asyncio callbacks rather than kernel events."""


class SocketIngress:
    """Frames of ``forwarder``'s socket faces at the current virtual time (see the module
    docstring); built once, with the forwarder and the driver, before any socket opens.

    Args:
        forwarder: the emulated gateway's forwarder.
        driver: the real-time driver of the forwarder's kernel.
        wall_wire_scale: emulated seconds per wall second of the times on the wire, or None
            when the wire carries emulated time (nothing converted).
    """

    def __init__(self, forwarder: Forwarder, driver: RealtimeDriver, *,
                 wall_wire_scale: float | None = None) -> None:
        if wall_wire_scale is not None and wall_wire_scale <= 0:
            raise ValueError(f"wall_wire_scale={wall_wire_scale}: give the time scale (> 0) "
                             "or None for emulated time on the wire")
        self.forwarder = forwarder
        self.driver = driver
        self.wall_wire_scale = wall_wire_scale
        self._taken: WeakSet[Face] = WeakSet()
        for face in list(forwarder.faces.values()):
            self.take(face)
        forwarder.face_taps.append(self._on_frame)

    def take(self, face: Face) -> None:
        """Make :meth:`receive` the receiver of ``face`` if it is a socket face."""
        if isinstance(face, SOCKET_FACES) and face not in self._taken:
            self._taken.add(face)
            face.set_receiver(self.receive)

    def _on_frame(self, face: Face, frame: bytes, inbound: bool) -> None:
        if inbound and face not in self._taken:
            self.take(face)

    def receive(self, face: Face, wire: bytes) -> None:
        """A socket face's receiver: the frame enters the forwarder at virtual now."""
        self.driver.external(self._enter, face, wire)

    def _enter(self, face: Face, wire: bytes) -> None:
        scale = self.wall_wire_scale
        interest = self._interest(wire) if scale is not None else None
        if interest is None:
            self.forwarder.receive(face, wire)
            return
        assert scale is not None
        interest.lifetime_ms = round(interest.lifetime * 1000 * scale)
        self.forwarder.on_incoming_interest(face, interest)

    def _interest(self, wire: bytes) -> Interest | None:
        """The Interest in ``wire``, bare or in an unfragmented LpPacket that is not a Nack
        (what the forwarder's ``receive`` would hand to ``on_incoming_interest``); None for
        anything else, which the forwarder's ``receive`` decodes and handles itself (drops
        counted there). A fragmented Interest from a socket is reassembled by the forwarder
        and keeps its wire lifetime."""
        try:
            packet = decode_packet(wire, self.forwarder.config.max_name_bytes)
            if (isinstance(packet, LpPacket) and not packet.is_fragmented
                    and packet.nack_reason is None and packet.fragment is not None):
                packet = decode_packet(packet.fragment, self.forwarder.config.max_name_bytes)
        except DecodeError:
            return None
        return packet if isinstance(packet, Interest) else None
