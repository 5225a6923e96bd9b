"""Any top-level packet from its wire: the one place the outer TLV type picks a decoder.

Its own module (not the package's ``__init__``) so that the compiled build compiles it with
the decoders it calls (docs/dticn-core.md "Performance"): the forwarder calls it for every
frame it receives.
"""

from __future__ import annotations

from dticn.packets.lp import MAX_LP_PACKET_SIZE, TYPE_LP_PACKET, LpPacket, lp_from_value
from dticn.packets.ndn import (
    TYPE_DATA,
    TYPE_INTEREST,
    Data,
    Interest,
    check_size,
    data_from_value,
    interest_from_value,
)
from dticn.packets.tlv import MAX_NDN_PACKET_SIZE, DecodeError, read_outer

Packet = Interest | Data | LpPacket


def decode_packet(wire: bytes, max_name_bytes: int | None = None) -> Packet:
    """Decode any top-level packet by its outer TLV type, read once by the reader the
    decoders use (a type written in more than one byte is the same type); names longer
    than ``max_name_bytes`` raise :class:`~dticn.packets.name.NameTooLong`."""
    buf = wire if type(wire) is bytes else bytes(wire)
    if len(buf) > MAX_LP_PACKET_SIZE:
        raise DecodeError(f"packet of {len(buf)} bytes is oversized")
    typ, start, end = read_outer(buf)
    if typ == TYPE_INTEREST:
        if end > MAX_NDN_PACKET_SIZE:
            check_size(buf)
        return interest_from_value(buf, start, end, max_name_bytes)
    if typ == TYPE_DATA:
        if end > MAX_NDN_PACKET_SIZE:
            check_size(buf)
        return data_from_value(buf, start, end, max_name_bytes)
    if typ == TYPE_LP_PACKET:
        return lp_from_value(buf, start, end)
    raise DecodeError(f"unknown top-level TLV type {typ} (expected Interest, Data or LpPacket)")
