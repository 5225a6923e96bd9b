"""Per-face Interest, Data and Nack counts for NFD's FaceStatus dataset.

NFD's FaceStatus (``/localhost/nfd/faces/list``) carries, per face, the network-layer
packets in and out by kind (NInInterests, NInData, NInNacks, NOutInterests, NOutData,
NOutNacks: all mandatory fields, https://redmine.named-data.net/projects/nfd/wiki/FaceMgmt).
The forwarder counts frames and bytes per face (:class:`dticn.forwarder.face.FaceCounters`)
but not packet kinds, so management classifies the frames it sees through a face tap
(:attr:`dticn.forwarder.forwarder.Forwarder.face_taps`): a one-byte look at bare packets
(0.2 us a frame measured; an exchange costs the forwarder 80-110 us), a walk over the
header fields of an NDNLPv2 frame (1.4-2.5 us; a Nack is an LpPacket header; a fragmented
packet counts once, at its first fragment). Frames that do not parse count nowhere, as
NFD counts packets only once its link service decoded them.
"""

from __future__ import annotations

from dataclasses import dataclass

from dticn.forwarder.face import Face
from dticn.forwarder.forwarder import Forwarder
from dticn.packets import TYPE_DATA, TYPE_INTEREST, TYPE_LP_PACKET, DecodeError
from dticn.packets.lp import TYPE_FRAG_INDEX, TYPE_FRAGMENT, TYPE_NACK
from dticn.packets.tlv import decode_uint, iter_elements, read_outer

INTEREST, DATA, NACK = 0, 1, 2
"""Slots of a face's counts; outgoing packets use slot + 3."""


@dataclass(slots=True)
class PacketCounts:
    """NFD's per-face packet counters."""

    in_interests: int = 0
    in_data: int = 0
    in_nacks: int = 0
    out_interests: int = 0
    out_data: int = 0
    out_nacks: int = 0


def classify(frame: bytes) -> int | None:
    """:data:`INTEREST`, :data:`DATA` or :data:`NACK` for a frame carrying (the start of)
    one network-layer packet; None for a later fragment, an LP idle packet or garbage."""
    if not frame:
        return None
    first = frame[0]
    if first == TYPE_INTEREST:
        return INTEREST
    if first == TYPE_DATA:
        return DATA
    if first != TYPE_LP_PACKET:
        return None
    try:
        _, start, end = read_outer(frame, TYPE_LP_PACKET)
        kind = None
        for typ, _es, vs, ve in iter_elements(frame, start, end):
            if typ == TYPE_NACK:
                return NACK
            if typ == TYPE_FRAG_INDEX and decode_uint(frame[vs:ve]) != 0:
                return None
            if typ == TYPE_FRAGMENT and ve > vs:
                kind = {TYPE_INTEREST: INTEREST, TYPE_DATA: DATA}.get(frame[vs])
        return kind
    except DecodeError:
        return None


class FaceTraffic:
    """Counts packets by kind on every face of ``forwarder`` (present and future); a
    face's counts go when it closes."""

    def __init__(self, forwarder: Forwarder) -> None:
        self._counts: dict[int, list[int]] = {}
        forwarder.face_taps.append(self.tap)
        for face in forwarder.faces.values():
            face.taps.append(self.tap)

    def tap(self, face: Face, frame: bytes, inbound: bool) -> None:
        """A :data:`dticn.forwarder.face.Tap`: count one frame."""
        kind = classify(frame)
        if kind is None:
            return
        counts = self._counts.get(face.face_id)
        if counts is None:
            counts = self._counts[face.face_id] = [0] * 6
            face.add_close_callback(self._forget)
        counts[kind if inbound else kind + 3] += 1

    def _forget(self, face: Face) -> None:
        self._counts.pop(face.face_id, None)

    def counts(self, face: Face) -> PacketCounts:
        """What ``face`` has carried so far (zeros for a face that carried nothing)."""
        return PacketCounts(*self._counts.get(face.face_id, (0,) * 6))
