"""NDNLPv2 link-protocol packets: network Nack and fragmentation.

Written by hand because python-ndn only knows the Nack header and refuses
fragmented packets. The encoding follows the NDNLPv2 spec (redmine.named-data.net,
"NDNLPv2"): header fields first in increasing type order, ``Fragment`` last.
python-ndn parses what this module writes for unfragmented packets (tested).

Fragmentation (for LoRa: one PSDU carries at most 127 bytes): a network packet larger
than the link MTU is cut into ``FragCount`` pieces that carry consecutive ``Sequence``
numbers; the receiver reassembles by ``(sender, Sequence - FragIndex)``.
Unknown header fields are ignored only when their type is in 800..959 with the two
low bits 00 (the spec's "ignore if unknown" rule); any other unknown field rejects the
packet.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from dticn.packets.tlv import (
    MAX_NDN_PACKET_SIZE,
    DecodeError,
    decode_uint,
    encode_tlv,
    encode_uint,
    encode_var,
    iter_elements,
    read_outer,
)

TYPE_LP_PACKET = 0x64
TYPE_FRAGMENT = 0x50
TYPE_SEQUENCE = 0x51
TYPE_FRAG_INDEX = 0x52
TYPE_FRAG_COUNT = 0x53
TYPE_HOP_COUNT = 0x54
TYPE_PIT_TOKEN = 0x62
TYPE_NACK = 0x0320
TYPE_NACK_REASON = 0x0321
TYPE_INCOMING_FACE_ID = 0x032C
TYPE_NEXT_HOP_FACE_ID = 0x0330
TYPE_CACHE_POLICY = 0x0334
TYPE_CONGESTION_MARK = 0x0340
TYPE_ACK = 0x0344
TYPE_TX_SEQUENCE = 0x0348
TYPE_NON_DISCOVERY = 0x034C
TYPE_PREFIX_ANNOUNCEMENT = 0x0350

_KNOWN_HEADERS = frozenset({
    TYPE_SEQUENCE, TYPE_FRAG_INDEX, TYPE_FRAG_COUNT, TYPE_HOP_COUNT, TYPE_PIT_TOKEN,
    TYPE_NACK, TYPE_INCOMING_FACE_ID, TYPE_NEXT_HOP_FACE_ID, TYPE_CACHE_POLICY,
    TYPE_CONGESTION_MARK, TYPE_ACK, TYPE_TX_SEQUENCE, TYPE_NON_DISCOVERY,
    TYPE_PREFIX_ANNOUNCEMENT,
})


class NackReason:
    """NackReason values (NDNLPv2)."""

    NONE: Final = 0
    CONGESTION: Final = 50
    DUPLICATE: Final = 100
    NO_ROUTE: Final = 150


@dataclass(slots=True)
class LpPacket:
    """An NDNLPv2 LpPacket; ``nack_reason`` not None means the fragment is Nacked.

    ``nack_reason`` of ``NackReason.NONE`` still marks a Nack (Nack header without a
    reason); ``None`` means no Nack header at all.
    """

    fragment: bytes | None = None
    sequence: int | None = None
    frag_index: int | None = None
    frag_count: int | None = None
    pit_token: bytes | None = None
    nack_reason: int | None = None
    incoming_face_id: int | None = None
    next_hop_face_id: int | None = None
    congestion_mark: int | None = None
    sequence_width: int = field(default=8, repr=False)

    @property
    def is_fragmented(self) -> bool:
        """True when this packet is one piece of several."""
        return (self.frag_count or 1) > 1

    def encode(self) -> bytes:
        """Encode the LpPacket (header fields in increasing type order)."""
        parts: list[bytes] = []
        if self.sequence is not None:
            parts.append(
                encode_tlv(TYPE_SEQUENCE, self.sequence.to_bytes(self.sequence_width, "big"))
            )
        if self.frag_index is not None:
            parts.append(encode_tlv(TYPE_FRAG_INDEX, encode_uint(self.frag_index)))
        if self.frag_count is not None:
            parts.append(encode_tlv(TYPE_FRAG_COUNT, encode_uint(self.frag_count)))
        if self.pit_token is not None:
            parts.append(encode_tlv(TYPE_PIT_TOKEN, self.pit_token))
        if self.nack_reason is not None:
            inner = b"" if self.nack_reason == NackReason.NONE else encode_tlv(
                TYPE_NACK_REASON, encode_uint(self.nack_reason)
            )
            parts.append(encode_tlv(TYPE_NACK, inner))
        if self.incoming_face_id is not None:
            parts.append(encode_tlv(TYPE_INCOMING_FACE_ID, encode_uint(self.incoming_face_id)))
        if self.next_hop_face_id is not None:
            parts.append(encode_tlv(TYPE_NEXT_HOP_FACE_ID, encode_uint(self.next_hop_face_id)))
        if self.congestion_mark is not None:
            parts.append(encode_tlv(TYPE_CONGESTION_MARK, encode_uint(self.congestion_mark)))
        if self.fragment is not None:
            parts.append(encode_tlv(TYPE_FRAGMENT, self.fragment))
        value = b"".join(parts)
        return encode_var(TYPE_LP_PACKET) + encode_var(len(value)) + value


MAX_LP_PACKET_SIZE = MAX_NDN_PACKET_SIZE + 64
"""Largest LpPacket accepted: a whole network-layer packet plus its NDNLPv2 headers."""


def decode_lp_packet(wire: bytes) -> LpPacket:
    """Decode an LpPacket (outer type 100); raise :class:`DecodeError` if malformed."""
    buf = wire if type(wire) is bytes else bytes(wire)
    if len(buf) > MAX_LP_PACKET_SIZE:
        raise DecodeError(f"LpPacket of {len(buf)} bytes is oversized")
    _, vstart, vend = read_outer(buf, TYPE_LP_PACKET)
    return lp_from_value(buf, vstart, vend)


def lp_from_value(buf: bytes, vstart: int, vend: int) -> LpPacket:
    """The LpPacket whose outer TLV-VALUE is ``buf[vstart:vend]``."""
    out = LpPacket()
    seen: set[int] = set()
    for typ, _es, s, e in iter_elements(buf, vstart, vend):
        if typ in seen:
            raise DecodeError(f"LpPacket field {typ} repeated")
        seen.add(typ)
        if TYPE_FRAGMENT in seen and typ != TYPE_FRAGMENT:
            raise DecodeError("LpPacket field after Fragment (Fragment must be last)")
        if typ == TYPE_FRAGMENT:
            out.fragment = buf[s:e]
        elif typ == TYPE_SEQUENCE:
            if not 1 <= e - s <= 8:
                raise DecodeError(f"Sequence of {e - s} bytes (must be 1..8)")
            out.sequence = int.from_bytes(buf[s:e], "big")
            out.sequence_width = e - s
        elif typ == TYPE_FRAG_INDEX:
            out.frag_index = decode_uint(buf[s:e])
        elif typ == TYPE_FRAG_COUNT:
            out.frag_count = decode_uint(buf[s:e])
        elif typ == TYPE_PIT_TOKEN:
            out.pit_token = buf[s:e]
        elif typ == TYPE_NACK:
            out.nack_reason = NackReason.NONE
            for t2, _es2, s2, e2 in iter_elements(buf, s, e):
                if t2 == TYPE_NACK_REASON:
                    out.nack_reason = decode_uint(buf[s2:e2])
        elif typ == TYPE_INCOMING_FACE_ID:
            out.incoming_face_id = decode_uint(buf[s:e])
        elif typ == TYPE_NEXT_HOP_FACE_ID:
            out.next_hop_face_id = decode_uint(buf[s:e])
        elif typ == TYPE_CONGESTION_MARK:
            out.congestion_mark = decode_uint(buf[s:e])
        elif typ in _KNOWN_HEADERS:
            continue  # understood but not used by this forwarder
        elif 800 <= typ <= 959 and (typ & 0x3) == 0:
            continue  # "ignore if unknown" range
        else:
            raise DecodeError(f"unknown LpPacket header field {typ}")
    count = out.frag_count if out.frag_count is not None else 1
    index = out.frag_index if out.frag_index is not None else 0
    if count < 1 or index >= count:
        raise DecodeError(f"FragIndex {index} not below FragCount {count}")
    if count > 1 and out.sequence is None:
        raise DecodeError("fragmented LpPacket without Sequence")
    return out


def encode_nack(interest_wire: bytes, reason: int) -> bytes:
    """A network Nack: LpPacket with Nack header and the Interest as Fragment.

    Identical to python-ndn's ``make_network_nack`` output.
    """
    return LpPacket(fragment=interest_wire, nack_reason=reason).encode()


def fragment_overhead(sequence_width: int = 8, frag_count: int = 2) -> int:
    """Bytes of LpPacket framing around one fragment's payload (payload < 253 bytes)."""
    count_len = len(encode_uint(frag_count))
    return (
        2  # LpPacket TL (short lengths)
        + 2 + sequence_width
        + 2 + count_len  # FragIndex (at most as wide as FragCount)
        + 2 + count_len
        + 2  # Fragment TL
    )


def fragment(
    packet: bytes, mtu: int, first_sequence: int, sequence_width: int = 8
) -> list[bytes]:
    """Cut ``packet`` into LpPackets no larger than ``mtu`` bytes each.

    A packet that already fits is returned unchanged (bare network packet, as NFD does).
    Raises ``ValueError`` when the MTU cannot carry even one byte of payload.
    """
    if len(packet) <= mtu:
        return [packet]
    count_guess = 2
    while True:
        payload = mtu - fragment_overhead(sequence_width, count_guess)
        if payload <= 0:
            raise ValueError(
                f"MTU {mtu} is too small for NDNLPv2 fragmentation; use an MTU of at least "
                f"{fragment_overhead(sequence_width, count_guess) + 1} bytes"
            )
        count = -(-len(packet) // payload)
        if len(encode_uint(count)) <= len(encode_uint(count_guess)):
            break
        count_guess = count
    frames = []
    mask = (1 << (8 * sequence_width)) - 1
    for i in range(count):
        piece = packet[i * payload : (i + 1) * payload]
        frames.append(
            LpPacket(
                fragment=piece,
                sequence=(first_sequence + i) & mask,
                frag_index=i,
                frag_count=count,
                sequence_width=sequence_width,
            ).encode()
        )
    return frames


@dataclass(slots=True)
class _Partial:
    count: int
    started: float
    pieces: dict[int, bytes] = field(default_factory=dict)
    size: int = 0


class Reassembler:
    """Per-face reassembly buffer, bounded in entries, bytes and age.

    Time comes in as an argument (the forwarder passes ``clock.now()``) so the buffer
    needs no timers: stale partial packets are purged on each arrival.
    """

    def __init__(
        self, timeout: float = 60.0, max_partials: int = 64, max_fragments: int = 128
    ) -> None:
        self.timeout = timeout
        self.max_partials = max_partials
        self.max_fragments = max_fragments
        self._partials: dict[int, _Partial] = {}
        self.timeouts = 0
        self.errors = 0

    def __len__(self) -> int:
        return len(self._partials)

    def add(self, lp: LpPacket, now: float) -> bytes | None:
        """Take one fragment; return the whole packet once every piece has arrived."""
        count = lp.frag_count or 1
        index = lp.frag_index or 0
        payload = lp.fragment or b""
        if count == 1:
            return payload
        if count > self.max_fragments:
            self.errors += 1
            raise DecodeError(
                f"FragCount {count} exceeds the limit {self.max_fragments}; raise "
                "max_fragments if the link really needs it"
            )
        self._purge(now)
        base = (lp.sequence or 0) - index
        partial = self._partials.get(base)
        if partial is None:
            if len(self._partials) >= self.max_partials:
                oldest = min(self._partials, key=lambda k: self._partials[k].started)
                del self._partials[oldest]
                self.timeouts += 1
            partial = self._partials[base] = _Partial(count, now)
        if partial.count != count:
            del self._partials[base]
            self.errors += 1
            raise DecodeError(f"FragCount changed within one packet ({partial.count}->{count})")
        if index not in partial.pieces:
            partial.pieces[index] = payload
            partial.size += len(payload)
        if partial.size > MAX_NDN_PACKET_SIZE:
            del self._partials[base]
            self.errors += 1
            raise DecodeError("reassembled packet would exceed the packet size limit")
        if len(partial.pieces) < count:
            return None
        del self._partials[base]
        return b"".join(partial.pieces[i] for i in range(count))

    def _purge(self, now: float) -> None:
        stale = [k for k, p in self._partials.items() if now - p.started > self.timeout]
        for k in stale:
            del self._partials[k]
            self.timeouts += 1
