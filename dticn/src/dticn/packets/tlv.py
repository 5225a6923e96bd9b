"""NDN TLV primitives: variable-size numbers, NonNegativeIntegers, element walking.

Written by hand (not via python-ndn's TlvModel) because the forwarder decodes every
packet on the hot path: a plain walker over ``memoryview`` is several times faster and
lets every failure surface as one exception type, :class:`DecodeError`, which the
forwarder turns into a counted drop. Byte compatibility with python-ndn is asserted in
``tests/packets``.
"""

from __future__ import annotations

MAX_NDN_PACKET_SIZE = 8800
"""Largest network-layer packet accepted, as in NFD and ndn-cxx."""


class DecodeError(ValueError):
    """The bytes are not a well-formed packet of the expected kind.

    The message names what was wrong; the forwarder drops such a packet and counts it,
    the face stays up.
    """


def read_var(buf: memoryview | bytes, pos: int) -> tuple[int, int]:
    """Read a TLV-TYPE or TLV-LENGTH number at ``pos``; return ``(value, new_pos)``."""
    try:
        first = buf[pos]
        if first < 0xFD:
            return first, pos + 1
        if first == 0xFD:
            return int.from_bytes(buf[pos + 1 : pos + 3], "big"), _check_end(buf, pos + 3)
        if first == 0xFE:
            return int.from_bytes(buf[pos + 1 : pos + 5], "big"), _check_end(buf, pos + 5)
        return int.from_bytes(buf[pos + 1 : pos + 9], "big"), _check_end(buf, pos + 9)
    except IndexError:
        raise DecodeError(f"truncated TLV number at offset {pos}") from None


def _check_end(buf: memoryview | bytes, end: int) -> int:
    if end > len(buf):
        raise DecodeError(f"truncated TLV number ending at offset {end} > {len(buf)}")
    return end


def encode_var(value: int) -> bytes:
    """Encode a TLV-TYPE or TLV-LENGTH number in its shortest form."""
    if value < 0xFD:
        return bytes((value,))
    if value <= 0xFFFF:
        return b"\xfd" + value.to_bytes(2, "big")
    if value <= 0xFFFFFFFF:
        return b"\xfe" + value.to_bytes(4, "big")
    return b"\xff" + value.to_bytes(8, "big")


def encode_tlv(typ: int, value: bytes | bytearray | memoryview) -> bytes:
    """One TLV element."""
    return encode_var(typ) + encode_var(len(value)) + bytes(value)


def encode_uint(value: int) -> bytes:
    """NonNegativeInteger: 1, 2, 4 or 8 bytes big-endian, the shortest that fits."""
    if value < 0:
        raise ValueError(f"NonNegativeInteger must be >= 0, got {value}")
    if value <= 0xFF:
        return value.to_bytes(1, "big")
    if value <= 0xFFFF:
        return value.to_bytes(2, "big")
    if value <= 0xFFFFFFFF:
        return value.to_bytes(4, "big")
    if value <= 0xFFFFFFFFFFFFFFFF:
        return value.to_bytes(8, "big")
    raise ValueError(f"NonNegativeInteger must fit in 64 bits, got {value}")


def decode_uint(value: memoryview | bytes) -> int:
    """Parse a NonNegativeInteger; its length must be 1, 2, 4 or 8."""
    if len(value) not in (1, 2, 4, 8):
        raise DecodeError(f"NonNegativeInteger of length {len(value)} (must be 1, 2, 4 or 8)")
    return int.from_bytes(value, "big")


def is_critical(typ: int) -> bool:
    """NDN packet format v0.3 evolvability rule: types < 32 or odd are critical."""
    return typ <= 31 or (typ & 1) == 1


def read_element(buf: bytes | memoryview, pos: int, end: int) -> tuple[int, int, int]:
    """``(type, value_start, value_end)`` of the TLV element at ``pos``, which must end by
    ``end``: the one reader of TLV headers, which every decoder walks its elements with
    (Interest, Data, MetaInfo, Name, LpPacket; :func:`iter_elements` too). A 1-byte TYPE
    and LENGTH, the common case, is read inline; this is the forwarder's hottest code.
    Raises :class:`DecodeError` when the header or the value runs past ``end``."""
    typ = buf[pos]
    if typ < 0xFD and pos + 1 < end:
        length = buf[pos + 1]
        if length < 0xFD:
            e = pos + 2 + length
            if e <= end:
                return typ, pos + 2, e
    return _read_long_element(buf, pos, end)


def _read_long_element(buf: bytes | memoryview, pos: int, end: int) -> tuple[int, int, int]:
    """:func:`read_element` for multi-byte numbers and for the errors."""
    typ = buf[pos]
    p = pos + 1
    if typ >= 0xFD:
        typ, p = read_var(buf, pos)
    if p >= end:
        raise DecodeError(f"TLV type {typ} at offset {pos} has no length")
    length = buf[p]
    s = p + 1
    if length >= 0xFD:
        length, s = read_var(buf, p)
    e = s + length
    if e > end:
        raise DecodeError(
            f"TLV type {typ} at offset {pos} claims {length} bytes, only "
            f"{max(0, end - s)} left"
        )
    return typ, s, e


def iter_elements(
    buf: bytes | memoryview, start: int = 0, end: int | None = None
) -> list[tuple[int, int, int, int]]:
    """Return ``(type, element_start, value_start, value_end)`` for each TLV in the range,
    read by :func:`read_element` (for callers that want them all at once)."""
    pos = start
    stop = len(buf) if end is None else end
    out: list[tuple[int, int, int, int]] = []
    append = out.append
    while pos < stop:
        typ, s, e = read_element(buf, pos, stop)
        append((typ, pos, s, e))
        pos = e
    return out


def read_outer(buf: bytes | memoryview, expected: int | None = None) -> tuple[int, int, int]:
    """Read the outermost TLV of a packet; it must span exactly the buffer.

    Returns ``(type, value_start, value_end)``. The type is read as any TLV-TYPE is, so a
    packet whose outer type is written in more than one byte is the same packet (the NDN
    readers of ndn-cxx and python-ndn accept it too): whoever dispatches on the outer
    type reads it here, with the decoder's own reader, never by its first byte.
    """
    n = len(buf)
    if n >= 2 and buf[0] < 0xFD and buf[1] < 0xFD:   # a packet of up to 254 bytes
        typ, vstart, vend = buf[0], 2, 2 + buf[1]
    else:
        if n == 0:
            raise DecodeError("empty packet")
        typ, p = read_var(buf, 0)
        length, vstart = read_var(buf, p)
        vend = vstart + length
    if vend != n:
        raise DecodeError(
            f"outer TLV type {typ} has length {vend - vstart} but {n - vstart} bytes follow"
        )
    if expected is not None and typ != expected:
        raise DecodeError(f"expected TLV type {expected}, got {typ}")
    return typ, vstart, vend
