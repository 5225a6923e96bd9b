"""NDNLPv2: network Nack (vs python-ndn) and fragmentation/reassembly."""

from __future__ import annotations

import random

import pytest
from ndn.encoding import InterestParam, make_interest
from ndn.encoding.ndnlp_v2 import make_network_nack, parse_lp_packet_v2, parse_network_nack

from dticn.packets import (
    Data,
    DecodeError,
    LpPacket,
    NackReason,
    Reassembler,
    decode_lp_packet,
    decode_packet,
    encode_nack,
    fragment,
    name_from_str,
)


@pytest.mark.parametrize(
    "reason", [NackReason.NO_ROUTE, NackReason.DUPLICATE, NackReason.CONGESTION, 0]
)
def test_nack_matches_python_ndn(reason: int) -> None:
    interest = bytes(make_interest("/x/y", InterestParam(nonce=42)))
    ours = encode_nack(interest, reason)
    if reason:
        assert ours == bytes(make_network_nack(interest, reason))
    got_reason, frag = parse_network_nack(ours)
    assert (got_reason, bytes(frag)) == (reason if reason else None, interest)
    back = decode_lp_packet(bytes(make_network_nack(interest, reason or 150)))
    assert back.nack_reason == (reason or 150) and back.fragment == interest


def test_nack_exact_vector() -> None:
    interest = bytes.fromhex("050b07030801610a0400000001")
    assert encode_nack(interest, 150).hex() == (
        "6418fd032005fd03210196" "500d050b07030801610a0400000001"
    )


def test_lp_header_fields_parse_in_python_ndn() -> None:
    wire = LpPacket(fragment=b"\x05\x00", pit_token=b"\xaa\xbb", incoming_face_id=300,
                    congestion_mark=1).encode()
    v = parse_lp_packet_v2(wire)
    assert bytes(v.pit_token) == b"\xaa\xbb" and v.incoming_face_id == 300
    assert v.congestion_mark == 1 and bytes(v.fragment) == b"\x05\x00"


def test_fragment_exact_vector() -> None:
    frames = fragment(bytes(range(22)), mtu=20, first_sequence=7, sequence_width=2)
    assert len(frames) == 4
    assert frames[0].hex() == "6412" "51020007" "520100" "530104" "5006" "000102030405"
    assert frames[3].hex() == "6410" "5102000a" "520103" "530104" "5004" "12131415"


@pytest.mark.parametrize("size", [128, 300, 1000, 8000])
@pytest.mark.parametrize("width", [8, 2])
def test_fragment_fits_lora_and_reassembles_any_order(size: int, width: int) -> None:
    packet = Data(name_from_str("/lora/item"), bytes(random.Random(size).randbytes(size))).encode()
    frames = fragment(packet, mtu=127, first_sequence=1000, sequence_width=width)
    assert len(frames) > 1 and all(len(f) <= 127 for f in frames)
    random.Random(1).shuffle(frames)
    r = Reassembler()
    out = [r.add(decode_lp_packet(f), now=0.0) for f in frames]
    assert out[-1] == packet and all(o is None for o in out[:-1]) and len(r) == 0


def test_small_packet_is_not_wrapped() -> None:
    assert fragment(b"\x05\x03abc", mtu=127, first_sequence=0) == [b"\x05\x03abc"]


def test_mtu_too_small_is_refused_with_reason() -> None:
    with pytest.raises(ValueError, match="MTU"):
        fragment(b"x" * 100, mtu=20, first_sequence=0)


def test_reassembler_times_out_and_is_bounded() -> None:
    r = Reassembler(timeout=5.0, max_partials=2)
    frames = [fragment(bytes([i]) * 300, 127, i * 100) for i in range(4)]
    for i, fr in enumerate(frames):
        assert r.add(decode_lp_packet(fr[0]), now=float(i)) is None
    assert len(r) == 2
    r.add(decode_lp_packet(frames[3][1]), now=100.0)
    assert r.timeouts >= 3


def test_fragcount_limit() -> None:
    r = Reassembler(max_fragments=4)
    lp = LpPacket(fragment=b"x", sequence=1, frag_index=0, frag_count=9)
    with pytest.raises(DecodeError, match="FragCount"):
        r.add(lp, 0.0)


@pytest.mark.parametrize(
    "wire",
    [
        LpPacket(fragment=b"x", frag_index=2, frag_count=2, sequence=1).encode(),
        LpPacket(fragment=b"x", frag_index=0, frag_count=2).encode(),
        bytes.fromhex("6406" "5001aa" "520100"),  # field after Fragment
        bytes.fromhex("6405" "fd03240100"),  # unknown 0x324, low bits 00 -> ignored... ok
        bytes.fromhex("6403" "5701aa"),  # unknown non-ignorable header
    ],
)
def test_bad_lp_packets(wire: bytes) -> None:
    if wire.hex() == "6405fd03240100":
        assert decode_lp_packet(wire).fragment is None
        return
    with pytest.raises(DecodeError):
        decode_packet(wire)
