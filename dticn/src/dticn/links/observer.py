"""Packet counting per link, direction and packet type (an observer, not a participant).

Links call :meth:`PacketCounter.count` with every frame they put on the wire and the
frame's :class:`~dticn.forwarder.face.PacketKind`, which the forwarder gave the face
when it sent the packet (:meth:`dticn.forwarder.face.Face.send`), so what the counter
reports is what crossed the link, including retransmissions and frames the link then
lost, and nothing is decoded again. Only a frame sent without a kind (a raw send) is
decoded, by :func:`describe`, to learn it.
"""

from __future__ import annotations

from collections import Counter

from dticn.forwarder.face import PacketKind
from dticn.packets import Data, DecodeError, Interest, LpPacket, decode_packet

KINDS = tuple(str(k) for k in PacketKind)


def describe(frame: bytes) -> tuple[PacketKind, Interest | Data | None]:
    """The kind of one link frame and the Interest or Data it carries (None for a Nack, a
    fragment or an undecodable frame), decoded from the bytes: for frames whose sender
    did not say what they are."""
    try:
        packet = decode_packet(frame)
    except DecodeError:
        return PacketKind.OTHER, None
    if isinstance(packet, Interest):
        return PacketKind.INTEREST, packet
    if isinstance(packet, Data):
        return PacketKind.DATA, packet
    if isinstance(packet, LpPacket):
        if packet.is_fragmented:
            return PacketKind.FRAGMENT, None
        if packet.nack_reason is not None:
            return PacketKind.NACK, None
        if packet.fragment is not None:
            return describe(packet.fragment)
    return PacketKind.OTHER, None


def classify(frame: bytes) -> PacketKind:
    """The packet type of one link frame, decoded: interest, data, nack, fragment or
    other."""
    return describe(frame)[0]


class PacketCounter:
    """``counts[(link, direction, kind)]``: frames sent on ``link`` in ``direction``."""

    def __init__(self) -> None:
        self.counts: Counter[tuple[str, str, str]] = Counter()
        self.bytes: Counter[tuple[str, str]] = Counter()

    def count(self, link: str, direction: str, frame: bytes,
              kind: PacketKind | None = None) -> None:
        """Record one frame put on ``link`` in ``direction`` (e.g. ``"up"``/``"down"``);
        ``kind`` as the sender said (None: decoded from ``frame``)."""
        self.counts[(link, direction, kind if kind is not None else classify(frame))] += 1
        self.bytes[(link, direction)] += len(frame)

    def total(self, link: str | None = None, direction: str | None = None,
              kind: str | None = None) -> int:
        """Sum of the counts matching every given field (None matches all)."""
        return sum(
            n for (lk, d, k), n in self.counts.items()
            if (link is None or lk == link) and (direction is None or d == direction)
            and (kind is None or k == kind)
        )

    def as_dict(self) -> dict[str, int]:
        """``{"link:direction:kind": n}`` for JSON."""
        return {f"{lk}:{d}:{k}": n for (lk, d, k), n in sorted(self.counts.items())}
