"""Interest/Data encoding is byte-identical to python-ndn and both parse each other."""

from __future__ import annotations

import pytest
from ndn.encoding import Component, InterestParam, MetaInfo, make_data, make_interest
from ndn.encoding import Name as NdnName
from ndn.encoding import parse_data as ndn_parse_data
from ndn.encoding import parse_interest as ndn_parse_interest
from ndn.security import DigestSha256Signer

from dticn.packets import (
    ContentType,
    Data,
    DecodeError,
    Interest,
    SignatureType,
    data_matches,
    decode_data,
    decode_interest,
    decode_packet,
    name_from_str,
    name_to_str,
)

INTEREST_CASES = [
    # (name, our kwargs, python-ndn InterestParam kwargs, app_param)
    ("/a", {"nonce": 1}, {"nonce": 1, "lifetime": None}, None),
    ("/a/b/c", {"nonce": 1234, "lifetime_ms": 4000, "can_be_prefix": True},
     {"nonce": 1234, "lifetime": 4000, "can_be_prefix": True}, None),
    ("/xid/7", {"nonce": 0xFFFFFFFF, "lifetime_ms": 64000, "must_be_fresh": True},
     {"nonce": 0xFFFFFFFF, "lifetime": 64000, "must_be_fresh": True}, None),
    ("/hop", {"nonce": 5, "lifetime_ms": 100, "hop_limit": 3},
     {"nonce": 5, "lifetime": 100, "hop_limit": 3}, None),
    ("/params/x", {"nonce": 9, "lifetime_ms": 1000, "app_parameters": b"\x01\x02\x03"},
     {"nonce": 9, "lifetime": 1000}, b"\x01\x02\x03"),
    ("/typed/seg=3/v=7/32=metadata", {"nonce": 77, "lifetime_ms": 70000},
     {"nonce": 77, "lifetime": 70000}, None),
    ("/reg/node-1", {"nonce": 1, "lifetime_ms": 300000, "can_be_prefix": True,
                     "must_be_fresh": True, "hop_limit": 255},
     {"nonce": 1, "lifetime": 300000, "can_be_prefix": True, "must_be_fresh": True,
      "hop_limit": 255}, None),
    ("/empty-params", {"nonce": 2, "lifetime_ms": 4000, "app_parameters": b""},
     {"nonce": 2, "lifetime": 4000}, b""),
]


@pytest.mark.parametrize(("uri", "ours", "theirs", "app_param"), INTEREST_CASES)
def test_interest_bytes_match_python_ndn(
    uri: str, ours: dict, theirs: dict, app_param: bytes | None
) -> None:
    mine = Interest(name_from_str(uri), **ours).encode()
    ref = bytes(make_interest(uri, InterestParam(**theirs), app_param=app_param))
    assert mine == ref
    # they parse ours
    name, param, ap, _ = ndn_parse_interest(mine)
    assert param.nonce == ours.get("nonce")
    assert param.can_be_prefix == ours.get("can_be_prefix", False)
    assert param.must_be_fresh == ours.get("must_be_fresh", False)
    assert param.hop_limit == ours.get("hop_limit")
    assert (bytes(ap) if ap is not None else None) == ours.get("app_parameters")
    # we parse theirs
    back = decode_interest(ref)
    assert back.name == tuple(bytes(c) for c in name)
    assert back.nonce == ours.get("nonce")
    assert back.lifetime_ms == ours.get("lifetime_ms")
    assert back.hop_limit == ours.get("hop_limit")
    assert back.app_parameters == ours.get("app_parameters")
    assert back.wire == ref


def test_interest_exact_vector() -> None:
    wire = Interest(name_from_str("/a/b/c"), can_be_prefix=True, nonce=1234,
                    lifetime_ms=4000).encode()
    assert wire.hex() == "0517070908016108016208016321000a04000004d20c020fa0"


def test_forwarding_hint_round_trips() -> None:
    ref = bytes(make_interest("/x", InterestParam(nonce=3, forwarding_hint=["/hint/a"])))
    got = decode_interest(ref)
    assert got.forwarding_hint is not None
    got.wire = b""
    assert got.encode() == ref


def test_hop_limit_patch_keeps_rest() -> None:
    i = decode_interest(bytes(make_interest("/h", InterestParam(nonce=1, hop_limit=9))))
    j = i.with_hop_limit(8)
    assert ndn_parse_interest(j.wire)[1].hop_limit == 8
    assert len(j.wire) == len(i.wire) and j.nonce == i.nonce


DATA_CASES = [
    ("/a/b/c", b"hello", ContentType.BLOB, 1000, None),
    ("/xid/1", b"", ContentType.BLOB, None, None),
    ("/reg/5", b"NCK", ContentType.NACK, 0, None),
    ("/seg/seg=0", b"x" * 300, ContentType.BLOB, 4000, Component.from_segment(3)),
    ("/key/KEY/1", b"\x00\xff", ContentType.KEY, 3600000, None),
]


@pytest.mark.parametrize(("uri", "content", "ctype", "fresh", "final"), DATA_CASES)
def test_data_bytes_match_python_ndn(
    uri: str, content: bytes, ctype: int, fresh: int | None, final: bytes | None
) -> None:
    mine = Data(name_from_str(uri), content, ctype, fresh,
                bytes(final) if final is not None else None).encode()
    meta = MetaInfo(content_type=ctype, freshness_period=fresh,
                    final_block_id=bytes(final) if final is not None else None)
    ref = bytes(make_data(uri, meta, content, signer=DigestSha256Signer()))
    assert mine == ref
    name, their_meta, their_content, sig = ndn_parse_data(mine)
    assert NdnName.to_str(name) == name_to_str(name_from_str(uri))
    assert their_meta.content_type == ctype
    assert their_meta.freshness_period == fresh
    assert bytes(their_content) == content
    assert sig.signature_info.signature_type == SignatureType.DIGEST_SHA256
    back = decode_data(ref)
    assert (back.content, back.content_type, back.freshness_ms) == (content, ctype, fresh)
    assert back.signature_type == SignatureType.DIGEST_SHA256


def test_data_exact_vector() -> None:
    wire = Data(name_from_str("/a/b/c"), b"hello", freshness_ms=1000).encode()
    assert wire.hex() == (
        "064207090801610801620801631407180100190203e8150568656c6c6f16031b0100"
        "1720487145ecd734d936d209b74be40181f4bdbe389b3f2a126a02620970c9fbab2e"
    )


def test_data_without_meta_info_or_signature_decodes() -> None:
    wire = bytes.fromhex("0605" "0703080161")
    d = decode_data(wire)
    assert d.name == name_from_str("/a") and d.content == b"" and d.signature_type is None


def _wrap(typ: int, value: bytes) -> bytes:
    return bytes((typ, len(value))) + value


BASE_INTEREST_VALUE = bytes.fromhex("07030801610a0400000001")


@pytest.mark.parametrize(
    ("wire", "reason"),
    [
        (_wrap(5, BASE_INTEREST_VALUE + b"\x25\x01\x00"), "critical"),
        (_wrap(5, BASE_INTEREST_VALUE + b"\x0f\x00"), "critical"),
        (_wrap(5, bytes.fromhex("0a0400000001070308016121")), "order"),
        (_wrap(5, BASE_INTEREST_VALUE + bytes.fromhex("0a0400000002")), "order"),
        (_wrap(5, bytes.fromhex("07030801610a03000001")), "Nonce"),
        (_wrap(5, bytes.fromhex("0a0400000001")), "Name"),
        (_wrap(5, bytes.fromhex("0700")), "Name"),
        (_wrap(5, bytes.fromhex("07050003616263")), "component"),
        (bytes.fromhex("0520070308"), "length"),
        (bytes.fromhex("05fd"), "truncated"),
        (b"", "empty"),
        (bytes.fromhex("0603070108") + b"\x00", "length"),
    ],
)
def test_malformed_interest_raises(wire: bytes, reason: str) -> None:
    with pytest.raises(DecodeError):
        decode_packet(wire)


def test_unknown_noncritical_element_is_skipped() -> None:
    wire = _wrap(5, BASE_INTEREST_VALUE + b"\x26\x01\x00")  # 38: even, > 31
    assert decode_interest(wire).nonce == 1


def test_oversized_packet_rejected() -> None:
    big = Data(name_from_str("/big"), b"x" * 9000).encode()
    with pytest.raises(DecodeError, match="limit"):
        decode_data(big)


def test_data_matches() -> None:
    d = Data(name_from_str("/a/b/c"))
    assert data_matches(Interest(name_from_str("/a/b/c")), d)
    assert not data_matches(Interest(name_from_str("/a/b")), d)
    assert data_matches(Interest(name_from_str("/a/b"), can_be_prefix=True), d)
    assert not data_matches(Interest(name_from_str("/a/x"), can_be_prefix=True), d)


def test_implicit_digest_matches_python_ndn_full_name() -> None:
    import hashlib

    from dticn.packets.matching import full_name

    d = Data(name_from_str("/a/b"), b"c")
    comp = full_name(d)[-1]
    assert comp == b"\x01\x20" + hashlib.sha256(d.encode()).digest()
    assert name_to_str(full_name(d)).startswith("/a/b/sha256digest=")
    assert data_matches(Interest(full_name(d)), d)
    assert data_matches(Interest(full_name(d)[:2], can_be_prefix=True), d)
