"""NDN-field signalling: exact TLV numbers and round trips through encode/decode."""

from __future__ import annotations

from dticn.packets import ContentType, Interest, decode_data, decode_interest, name_from_str
from dticn.schemes.signalling import (
    CONTENT_TYPE_WAIT,
    TLV_REFLEXIVE_NAME_PREFIX,
    TLV_WAIT_TIME,
    ack,
    nack,
    read_reflexive_prefix,
    read_wait_hint,
    reflexive_parameters,
    wait_hint,
)

N = name_from_str


def test_wait_hint_is_content_type_1024_with_a_wait_time_tlv_in_ms() -> None:
    data = decode_data(wait_hint(N("/xid/3"), 30.72).encode())
    assert data.content_type == CONTENT_TYPE_WAIT == 1024
    assert data.content == bytes((TLV_WAIT_TIME, 2)) + (30720).to_bytes(2, "big")
    assert data.freshness_ms == 0
    assert read_wait_hint(data) == 30.72


def test_nack_and_ack_are_not_wait_hints() -> None:
    n = decode_data(nack(N("/nobody/1")).encode())
    assert n.content_type == ContentType.NACK == 3 and n.freshness_ms == 0
    assert read_wait_hint(n) is None
    assert read_wait_hint(decode_data(ack(N("/reg/xid")).encode())) is None


def test_reflexive_name_prefix_round_trips_in_application_parameters() -> None:
    rnp = N("/rfx/abcdefgh")
    params = reflexive_parameters(rnp)
    assert params[0] == TLV_REFLEXIVE_NAME_PREFIX == 0xC9
    wire = Interest(N("/RNP/gw/xid/1"), nonce=1, app_parameters=params).encode()
    assert read_reflexive_prefix(decode_interest(wire).app_parameters) == rnp
    assert read_reflexive_prefix(b"\x01\x00") is None
    assert read_reflexive_prefix(None) is None
