"""DT-ICN's typed NDN packet layer (v0.3 Interest/Data, NDNLPv2 LpPacket).

The rest of DT-ICN uses these dataclasses, never python-ndn's API shapes; python-ndn
is the reference the tests compare against byte for byte.
"""

from __future__ import annotations

from dticn.packets.lp import (
    MAX_LP_PACKET_SIZE,
    TYPE_LP_PACKET,
    LpPacket,
    NackReason,
    Reassembler,
    decode_lp_packet,
    encode_nack,
    fragment,
    lp_from_value,
)
from dticn.packets.matching import data_matches
from dticn.packets.name import Name, NameTooLong, encode_name, is_prefix, name_from_str, name_to_str
from dticn.packets.ndn import (
    TYPE_DATA,
    TYPE_INTEREST,
    ContentType,
    Data,
    Interest,
    SignatureType,
    check_size,
    data_from_value,
    decode_data,
    decode_interest,
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


__all__ = [
    "MAX_NDN_PACKET_SIZE",
    "TYPE_DATA",
    "TYPE_INTEREST",
    "TYPE_LP_PACKET",
    "ContentType",
    "Data",
    "DecodeError",
    "Interest",
    "LpPacket",
    "NackReason",
    "Name",
    "NameTooLong",
    "Packet",
    "Reassembler",
    "SignatureType",
    "data_matches",
    "decode_data",
    "decode_interest",
    "decode_lp_packet",
    "decode_packet",
    "encode_nack",
    "encode_name",
    "fragment",
    "is_prefix",
    "name_from_str",
    "name_to_str",
]
