"""The LoRa link as NDN faces onto the MAC of the radio simulator (DSME, or LoRaWAN).

Node side: one :class:`LoRaFace` onto the node's :class:`~dticn.mac.device.DsmeDevice`,
addressed to the coordinator. Gateway side: one :class:`LoRaFace` per node onto the
:class:`~dticn.mac.coordinator.DsmeCoordinator` (point-to-point, so FIB routes name a node),
and a :class:`GatewayRadio` that hands each received MAC payload to the face of its sender.

The face MTU is the MAC payload (127-byte PSDU minus 11 bytes of header and FCS = 116 B);
larger NDN packets are cut into NDNLPv2 fragments by :class:`~dticn.forwarder.face.Face`.
Which MAC access a frame uses is the face's ``slot_policy``, given by whoever builds the
edge: by default the GTS (the gateway's frames in the node's downlink GTS, the node's in its
uplink GTS); the schemes put a node's registration in the CAP
(:func:`dticn.schemes.signalling.registration_in_cap`). The policy and the packet counter
read the kind and the packet the forwarder sent (:meth:`~dticn.forwarder.face.Face.send`);
neither decodes the frame (only a raw send without a kind is decoded, once).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dticn.forwarder.face import Face, LinkType, PacketKind
from dticn.links.observer import PacketCounter, describe
from dticn.mac.frames import RxMeta
from dticn.mac.platform import MacRequest
from dticn.packets import Data, Interest

SlotPolicy = Callable[[PacketKind, Interest | Data | None], str]
"""Chooses ``"gts"`` or ``"cap"`` for one frame from its kind and packet."""


def gts_always(kind: PacketKind, packet: Interest | Data | None) -> str:
    """Every frame in the GTS (gateway downlink)."""
    return "gts"


class LoRaFace(Face):
    """A face whose frames are MAC payloads to one peer address.

    Args:
        mac: a DSME device or coordinator, or a LoRaWAN device or gateway
            (:mod:`dticn.mac.lorawan`): anything with ``send(dest, payload, slot=...,
            on_result=...)`` returning a :class:`~dticn.mac.platform.MacRequest`, and
            ``max_payload`` (the face's MTU).
        peer: MAC address of the other end.
        counter / link / direction: where frames are counted (observer).
        slot_policy: chooses ``"gts"`` or ``"cap"`` per frame, from what it carries.
        drop_queued_duplicates: do not queue a frame whose exact bytes are already waiting
            (not yet sent) in the MAC queue for this peer. A retransmitted Interest carries
            the same wire as the copy still waiting for the next GTS; queueing both would
            only spend a second slot on the same bytes (the gateway sets this).
    """

    def __init__(self, mac: Any, peer: int, *, counter: PacketCounter, link: str,
                 direction: str, slot_policy: SlotPolicy = gts_always,
                 drop_queued_duplicates: bool = False) -> None:
        super().__init__(f"lora://{peer}", mtu=mac.max_payload,
                         link_type=LinkType.POINT_TO_POINT, sequence_width=2)
        self.mac = mac
        self.peer = peer
        self.counter = counter
        self.link = link
        self.direction = direction
        self.slot_policy = slot_policy
        self.failed: list[MacRequest] = []
        self.drop_queued_duplicates = drop_queued_duplicates
        self.duplicates_dropped = 0
        self._queued: list[MacRequest] = []

    def transmit(self, frame: bytes) -> None:
        """A raw frame (sent without a kind): what it carries is decoded once."""
        self.transmit_typed(frame, None, None)

    def transmit_typed(self, frame: bytes, kind: PacketKind | None,
                       packet: Interest | Data | None) -> None:
        """Queue the frame in the MAC (its GTS or the CAP); never re-enters the forwarder."""
        if self.drop_queued_duplicates:
            self._queued = [r for r in self._queued if r.status is None and r.attempts == 0]
            if any(r.payload == frame for r in self._queued):
                self.duplicates_dropped += 1
                return
        if kind is None:
            kind, packet = describe(frame)
        self.counter.count(self.link, self.direction, frame, kind)
        req = self.mac.send(self.peer, frame, slot=self.slot_policy(kind, packet),
                            on_result=self._result)
        if self.drop_queued_duplicates:
            self._queued.append(req)

    def _result(self, request: MacRequest) -> None:
        if request.status is not None and request.status.value != "delivered":
            self.failed.append(request)

    def on_mac_receive(self, src: int, payload: bytes, meta: RxMeta) -> None:
        """MAC upcall: one received payload from the peer."""
        self.deliver(payload)


class GatewayRadio:
    """Demultiplexes the coordinator's received payloads to one face per node."""

    def __init__(self, coordinator: Any) -> None:
        self.coordinator = coordinator
        self.faces: dict[int, LoRaFace] = {}
        self.unknown_sources = 0
        coordinator.on_receive = self._receive

    def add(self, face: LoRaFace) -> None:
        """Route payloads from ``face.peer`` to ``face``."""
        self.faces[face.peer] = face

    def _receive(self, src: int, payload: bytes, meta: RxMeta) -> None:
        face = self.faces.get(src)
        if face is None:
            self.unknown_sources += 1
            return
        face.on_mac_receive(src, payload, meta)
