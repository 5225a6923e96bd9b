"""DT-ICN's typed NDN packet layer (v0.3 Interest/Data, NDNLPv2 LpPacket).

The rest of DT-ICN uses these dataclasses, never python-ndn's API shapes; python-ndn
is the reference the tests compare against byte for byte.
"""

from __future__ import annotations

from dticn.packets.decode import Packet, decode_packet
from dticn.packets.lp import (
    TYPE_LP_PACKET,
    LpPacket,
    NackReason,
    Reassembler,
    decode_lp_packet,
    encode_nack,
    fragment,
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
    decode_data,
    decode_interest,
)
from dticn.packets.tlv import MAX_NDN_PACKET_SIZE, DecodeError

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
