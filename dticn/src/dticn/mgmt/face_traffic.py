"""Per-face Interest, Data and Nack counts for NFD's FaceStatus dataset.

NFD's FaceStatus (``/localhost/nfd/faces/list``) carries, per face, the network-layer
packets in and out by kind (NInInterests, NInData, NInNacks, NOutInterests, NOutData,
NOutNacks: all mandatory fields, https://redmine.named-data.net/projects/nfd/wiki/FaceMgmt).
The forwarder counts frames and bytes per face (:class:`dticn.forwarder.face.FaceCounters`)
but not packet kinds, so management classifies the frames it sees through a face tap
(:attr:`dticn.forwarder.forwarder.Forwarder.face_taps`): a one-byte look at bare packets,
an LpPacket decode only for NDNLPv2 frames (a Nack is an LpPacket header; a fragmented
packet counts once, at its first fragment). Frames that do not decode count nowhere, as
NFD counts packets only once its link service has decoded them.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

from dticn.forwarder.face import Face
from dticn.forwarder.forwarder import Forwarder
from dticn.packets import (
    TYPE_DATA,
    TYPE_INTEREST,
    TYPE_LP_PACKET,
    DecodeError,
    LpPacket,
    decode_packet,
)


@dataclass(slots=True)
class PacketCounts:
    """NFD's per-face packet counters."""

    in_interests: int = 0
    in_data: int = 0
    in_nacks: int = 0
    out_interests: int = 0
    out_data: int = 0
    out_nacks: int = 0


def classify(frame: bytes) -> str | None:
    """``"interest"``, ``"data"`` or ``"nack"`` for a frame carrying (the start of) one
    network-layer packet; None for a later fragment, an LP idle packet or garbage."""
    if not frame:
        return None
    first = frame[0]
    if first == TYPE_INTEREST:
        return "interest"
    if first == TYPE_DATA:
        return "data"
    if first != TYPE_LP_PACKET:
        return None
    try:
        lp = decode_packet(frame)
    except DecodeError:
        return None
    if not isinstance(lp, LpPacket):
        return None
    if lp.nack_reason is not None:
        return "nack"
    fragment = lp.fragment
    if not fragment or (lp.frag_index or 0) != 0:
        return None
    return {TYPE_INTEREST: "interest", TYPE_DATA: "data"}.get(fragment[0])


class FaceTraffic:
    """Counts packets by kind on every face of ``forwarder`` (present and future).

    Counts live as long as their face object (weak keys), so a closed face leaves
    nothing behind.
    """

    def __init__(self, forwarder: Forwarder) -> None:
        self._counts: weakref.WeakKeyDictionary[Face, PacketCounts] = weakref.WeakKeyDictionary()
        forwarder.face_taps.append(self.tap)
        for face in forwarder.faces.values():
            face.taps.append(self.tap)

    def tap(self, face: Face, frame: bytes, inbound: bool) -> None:
        """A :data:`dticn.forwarder.face.Tap`: count one frame."""
        kind = classify(frame)
        if kind is None:
            return
        counts = self._counts.get(face)
        if counts is None:
            counts = self._counts[face] = PacketCounts()
        field = ("in_" if inbound else "out_") + ("data" if kind == "data" else kind + "s")
        setattr(counts, field, getattr(counts, field) + 1)

    def counts(self, face: Face) -> PacketCounts:
        """What ``face`` has carried so far (zeros for a face that carried nothing)."""
        return self._counts.get(face) or PacketCounts()
