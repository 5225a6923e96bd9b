"""Faces: the forwarder's view of a link, and the contract every link driver implements.

How bytes move (sans-IO):

* **In.** A link driver (asyncio socket, simulated LoRa radio, in-memory pipe) calls
  :meth:`Face.deliver` with one received frame: a bare NDN packet (Interest, Data) or an
  NDNLPv2 LpPacket. ``deliver`` hands ``(face, frame)`` to the receiver installed by
  :meth:`dticn.forwarder.forwarder.Forwarder.add_face`, which decodes it, reassembles
  fragments (per-face :class:`~dticn.packets.lp.Reassembler`), and runs the pipelines.
  The driver never decodes anything itself.
* **Out.** The forwarder calls :meth:`Face.send` with one complete network-layer packet
  and what it is: its :class:`PacketKind` (Interest, Data, Nack) and the decoded Interest
  or Data the forwarder already holds. ``send`` counts it, cuts it into NDNLPv2 fragments
  when it exceeds :attr:`Face.mtu` (a LoRa face has ``mtu=127``), and calls
  :meth:`Face.transmit_typed` once per frame with the frame's kind (``FRAGMENT`` for a
  piece) and the packet. By default that calls :meth:`Face.transmit` with the bytes
  alone: a raw-bytes driver (a socket) implements only ``transmit``; a link whose
  policy or observer depends on what a frame carries (the LoRa face: CAP or GTS, packet
  counts) overrides ``transmit_typed`` and never decodes the frame again. Neither may
  call back into the forwarder synchronously with a reply (queue it instead), so
  pipelines never re-enter themselves through a link. A send without a kind (a test,
  a tool writing raw frames) reaches ``transmit_typed`` with ``kind=None``.

Identity and scope: ``face_id`` is assigned by the forwarder's face table when the face
is added (0 until then). ``scope`` LOCAL marks application faces on this host (Unix
socket, loopback TCP): only they may send or receive ``/localhost`` names, as in NFD.
``link_type`` POINT_TO_POINT lets the same nonce from the same face count as a
retransmission rather than a loop; MULTI_ACCESS (a LoRa broadcast channel) does not.

Per-face retransmission defaults (CCN-lite style, see
:class:`dticn.forwarder.retx.RetxPolicy`) may be set in ``retx_policy``; the forwarder
uses them for Interests sent out of this face unless a prefix policy overrides them.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dticn.forwarder.native import mypyc_attr
from dticn.packets.lp import Reassembler, fragment

if TYPE_CHECKING:
    from dticn.forwarder.retx import RetxPolicy
    from dticn.packets.ndn import Data, Interest


log = logging.getLogger(__name__)

INVALID_FACE_ID = 0

Receiver = Callable[["Face", bytes], None]
"""What a face hands received frames to: ``receiver(face, frame)``."""
Tap = Callable[["Face", bytes, bool], None]
"""Sees every frame a face receives (``inbound`` True) or transmits: ``tap(face, frame,
inbound)``; a pcap writer (:mod:`dticn.net.pcap`) is one."""


class PacketKind(enum.StrEnum):
    """What one frame on a link carries. The forwarder knows it when it sends, so link
    policies and observers read it instead of decoding the frame again; the values are
    the packet-count keys (:class:`dticn.links.observer.PacketCounter`)."""

    INTEREST = "interest"
    DATA = "data"
    NACK = "nack"
    FRAGMENT = "fragment"
    """One NDNLPv2 piece of a packet larger than the face's MTU."""
    OTHER = "other"
    """Neither of the above (a raw frame that does not decode); the forwarder never
    sends one."""


KIND_INTEREST, KIND_DATA, KIND_NACK = PacketKind.INTEREST, PacketKind.DATA, PacketKind.NACK
"""The kinds the forwarder sends, as module globals: reading one costs a tenth of an Enum
member lookup (about 10 ns against 100 ns, CPython 3.11), on every packet it sends."""


class FaceScope(enum.Enum):
    """NFD face scope: LOCAL faces reach applications on this host."""

    NON_LOCAL = 0
    LOCAL = 1


class LinkType(enum.Enum):
    """NFD link type; decides whether a same-face duplicate nonce is a loop."""

    POINT_TO_POINT = 0
    MULTI_ACCESS = 1


@dataclass(slots=True)
class FaceCounters:
    """Per-face packet and byte counters (as NFD's face status reports them).

    Frames and bytes are counted as they cross the face. Network-layer packets by kind
    (NFD's NInInterests ... NOutNacks) are counted where the kind is already known: in
    by the forwarder's pipelines once a frame decoded (a fragmented packet once, when
    whole; a frame that does not decode counts nowhere), out by :meth:`Face.send` from the
    kind the forwarder passes with the packet.
    """

    in_frames: int = 0
    out_frames: int = 0
    in_bytes: int = 0
    out_bytes: int = 0
    out_packets: int = 0
    out_fragments: int = 0
    in_interests: int = 0
    in_data: int = 0
    in_nacks: int = 0
    out_interests: int = 0
    out_data: int = 0
    out_nacks: int = 0


@mypyc_attr(allow_interpreted_subclasses=True)
class Face:
    """Base class of every face. Subclasses implement :meth:`transmit` (and maybe
    :meth:`on_close`); everything else is shared.

    Args:
        uri: remote endpoint, for logs and management (``tcp4://127.0.0.1:50000``).
        local_uri: local endpoint.
        scope: LOCAL for application faces on this host.
        link_type: POINT_TO_POINT or MULTI_ACCESS.
        mtu: largest frame the link carries in bytes; ``None`` means unlimited (stream
            sockets). Larger packets are fragmented with NDNLPv2.
        sequence_width: bytes of the NDNLPv2 Sequence field in fragments (8 in NFD;
            a LoRa face may choose 2 to save airtime).
        reassembly_timeout: seconds after which an incomplete packet is discarded.
    """

    def __init__(
        self,
        uri: str = "internal://",
        local_uri: str = "internal://",
        *,
        scope: FaceScope = FaceScope.NON_LOCAL,
        link_type: LinkType = LinkType.POINT_TO_POINT,
        mtu: int | None = None,
        sequence_width: int = 8,
        reassembly_timeout: float = 60.0,
    ) -> None:
        self.face_id = INVALID_FACE_ID
        self.uri = uri
        self.local_uri = local_uri
        self.scope = scope
        self.link_type = link_type
        self.mtu = mtu
        self.sequence_width = sequence_width
        self.counters = FaceCounters()
        self.reassembler = Reassembler(timeout=reassembly_timeout)
        self.retx_policy: RetxPolicy | None = None
        self.wants_incoming_face_id = False
        self._receiver: Receiver | None = None
        self.taps: list[Tap] = []
        self._close_callbacks: list[Callable[[Face], None]] = []
        self._next_sequence = 0
        self.closed = False

    def __repr__(self) -> str:
        return f"<{type(self).__name__} id={self.face_id} {self.uri}>"

    @property
    def is_local(self) -> bool:
        """True for application faces on this host."""
        return self.scope is FaceScope.LOCAL

    def set_receiver(self, receiver: Receiver | None) -> None:
        """Install where received frames go (the forwarder does this in ``add_face``)."""
        self._receiver = receiver

    def deliver(self, frame: bytes) -> None:
        """Called by the link driver for every received frame."""
        if self.closed:
            return
        self.counters.in_frames += 1
        self.counters.in_bytes += len(frame)
        for tap in self.taps:
            tap(self, frame, True)
        if self._receiver is not None:
            self._receiver(self, frame)

    def send(self, wire: bytes, kind: PacketKind | None = None,
             packet: Interest | Data | None = None) -> None:
        """Called by the forwarder with one network-layer packet's ``wire`` (or an
        LpPacket's), its kind (``NACK`` for a Nack, whose Interest travels inside the wire)
        and the Interest or Data the forwarder holds for it (None for a Nack). A send
        without a kind is passed on untyped."""
        if self.closed:
            return
        counters = self.counters
        counters.out_packets += 1
        if kind is KIND_INTEREST:
            counters.out_interests += 1
        elif kind is KIND_DATA:
            counters.out_data += 1
        elif kind is KIND_NACK:
            counters.out_nacks += 1
        if self.mtu is not None and len(wire) > self.mtu:
            frames = fragment(wire, self.mtu, self._next_sequence, self.sequence_width)
            # consecutive Sequence numbers across packets: the receiver keys reassembly
            # by Sequence - FragIndex, so blocks of different packets never overlap
            self._next_sequence = (self._next_sequence + len(frames)) % (
                1 << (8 * self.sequence_width)
            )
            self.counters.out_fragments += len(frames)
            kind = PacketKind.FRAGMENT
        else:
            frames = [wire]
        for frame in frames:
            self.counters.out_frames += 1
            self.counters.out_bytes += len(frame)
            for tap in self.taps:
                tap(self, frame, False)
            self.transmit_typed(frame, kind, packet)

    def transmit_typed(self, frame: bytes, kind: PacketKind | None,
                       packet: Interest | Data | None) -> None:
        """Put one frame on the link, told what it carries (``kind`` None: unknown; for a
        ``FRAGMENT``, ``packet`` is the whole packet it is a piece of). Faces whose link
        treats packet types differently override this; the default sends the bytes."""
        self.transmit(frame)

    def transmit(self, frame: bytes) -> None:
        """Put one frame on the link; every concrete face overrides this (declared here
        so that compiled callers, see docs/dticn-core.md "Performance", know it)."""
        raise NotImplementedError

    def add_close_callback(self, callback: Callable[[Face], None]) -> None:
        """Run ``callback(face)`` once when the face closes (the face table uses it)."""
        self._close_callbacks.append(callback)

    def close(self) -> None:
        """Close the face; the forwarder forgets it and its routes."""
        if self.closed:
            return
        self.closed = True
        self.on_close()
        for cb in self._close_callbacks:
            cb(self)
        self._close_callbacks.clear()

    def on_close(self) -> None:
        """Driver hook: release the socket or radio binding."""


class RecordingFace(Face):
    """A face that keeps what the forwarder sent: for tests, benchmarks and the simulator
    glue that wants to inspect frames before putting them on a simulated link."""

    def __init__(
        self, uri: str = "recording://", *, local_uri: str = "internal://",
        scope: FaceScope = FaceScope.NON_LOCAL, link_type: LinkType = LinkType.POINT_TO_POINT,
        mtu: int | None = None, sequence_width: int = 8, reassembly_timeout: float = 60.0,
    ) -> None:
        # Face's keywords spelled out: mypyc passes a forwarded **kwargs wrongly (see
        # docs/dticn-core.md "Performance")
        super().__init__(uri, local_uri, scope=scope, link_type=link_type, mtu=mtu,
                         sequence_width=sequence_width, reassembly_timeout=reassembly_timeout)
        self.sent: list[bytes] = []

    def transmit(self, frame: bytes) -> None:
        self.sent.append(frame)

    def take(self) -> list[bytes]:
        """Return and clear the frames sent so far."""
        out, self.sent = self.sent, []
        return out


class CallbackFace(Face):
    """A face whose :meth:`transmit` calls a function: the glue for a simulated link
    (``on_transmit`` schedules delivery on the EventKernel) or an in-process app."""

    def __init__(
        self, on_transmit: Callable[[bytes], None], uri: str = "callback://", *,
        local_uri: str = "internal://", scope: FaceScope = FaceScope.NON_LOCAL,
        link_type: LinkType = LinkType.POINT_TO_POINT, mtu: int | None = None,
        sequence_width: int = 8, reassembly_timeout: float = 60.0,
    ) -> None:
        super().__init__(uri, local_uri, scope=scope, link_type=link_type, mtu=mtu,
                         sequence_width=sequence_width, reassembly_timeout=reassembly_timeout)
        self._on_transmit = on_transmit

    def transmit(self, frame: bytes) -> None:
        self._on_transmit(frame)
