"""Packet counting per link, direction and packet type (an observer, not a participant).

Links call :meth:`PacketCounter.count` with every frame they put on the wire; the counter
decodes it only to classify it (Interest, Data, Nack, fragment), so what it reports is what
crossed the link, including retransmissions and frames the link then lost.
"""

from __future__ import annotations

from collections import Counter

from dticn.packets import Data, DecodeError, Interest, LpPacket, decode_packet

KINDS = ("interest", "data", "nack", "fragment", "other")


def classify(frame: bytes) -> str:
    """The packet type of one link frame: interest, data, nack, fragment or other."""
    try:
        packet = decode_packet(frame)
    except DecodeError:
        return "other"
    if isinstance(packet, Interest):
        return "interest"
    if isinstance(packet, Data):
        return "data"
    if isinstance(packet, LpPacket):
        if packet.is_fragmented:
            return "fragment"
        if packet.nack_reason is not None:
            return "nack"
        if packet.fragment is not None:
            return classify(packet.fragment)
    return "other"


class PacketCounter:
    """``counts[(link, direction, kind)]``: frames sent on ``link`` in ``direction``."""

    def __init__(self) -> None:
        self.counts: Counter[tuple[str, str, str]] = Counter()
        self.bytes: Counter[tuple[str, str]] = Counter()

    def count(self, link: str, direction: str, frame: bytes) -> None:
        """Record one frame put on ``link`` in ``direction`` (e.g. ``"up"``/``"down"``)."""
        self.counts[(link, direction, classify(frame))] += 1
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
