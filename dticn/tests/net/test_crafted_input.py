"""Issue 24: the two crafted inputs that found defects, sent to a real `dticn forwarder`
process over its unix socket.

1. A top-level Interest or Data whose TLV type is written in three bytes (``FD 00 05``)
   is the same packet to every NDN reader; the forwarder used to pick the pipeline by the
   first byte and sent it down the NDNLPv2 path, where it raised (an internal error, the
   packet lost without a counted reason). It is now handled as what it decodes to.
2. An Interest of exactly 8,800 bytes (the packet limit) toward a prefix without a route
   used to be dropped as ``name_too_long`` (a 2,048-byte name limit) and got no Nack;
   the name limit is now the packet's, so it is Nacked NoRoute like any other.

The forwarder's own counters are read back with `dticn status --json`, as a user would.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dticn.packets import Data, Interest, LpPacket, NackReason, decode_packet, name_from_str
from dticn.packets.tlv import encode_var, read_outer

from ..forwarder.test_limits import interest_of_size
from .test_flood import Client
from .test_unix_socket import _forwarder, _ready, _stop

N = name_from_str


def _long_type(wire: bytes) -> bytes:
    """The same packet with its outer TLV-TYPE written as ``FD`` and two bytes."""
    typ, start, end = read_outer(wire)
    return b"\xfd" + typ.to_bytes(2, "big") + encode_var(end - start) + wire[start:end]


def _status(sock: Path) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "dticn.cli", "status", "--transport", f"unix://{sock}",
         "--json"], capture_output=True, text=True, timeout=60, check=True)
    return json.loads(out.stdout)


@pytest.fixture
def forwarder(tmp_path: Path):  # type: ignore[no-untyped-def]
    sock = tmp_path / "fw.sock"
    proc = _forwarder(sock)
    try:
        _ready(proc)
        yield sock
    finally:
        _stop(proc)


def test_outer_type_in_three_bytes_is_the_packet_it_decodes_to(forwarder: Path) -> None:
    interest = Interest(N("/nobody/home"), nonce=7).encode()
    crafted = _long_type(interest)
    assert crafted[:3] == b"\xfd\x00\x05" and decode_packet(crafted).name == N("/nobody/home")
    client = Client(str(forwarder))
    try:
        client.send(crafted)
        reply = client.recv()
        assert isinstance(reply, LpPacket) and reply.nack_reason == NackReason.NO_ROUTE
        nacked = decode_packet(reply.fragment or b"")
        assert isinstance(nacked, Interest) and nacked.name == N("/nobody/home")
        assert nacked.nonce == 7
        client.send(_long_type(Data(N("/nobody/data"), b"x").encode()))
        client.send(Interest(N("/nobody/else"), nonce=8).encode())  # still served after it
        reply = client.recv()
        assert isinstance(reply, LpPacket) and reply.nack_reason == NackReason.NO_ROUTE
    finally:
        client.close()
    counters = _status(forwarder)["counters"]
    drops = counters["drops"]
    assert "internal_error" not in drops, drops
    assert drops.get("unsolicited_data") == 1, drops
    assert counters["in_data"] == 1


def test_interest_of_the_packet_limit_without_a_route_is_nacked(forwarder: Path) -> None:
    big = interest_of_size(8800, "/nobody/home")
    client = Client(str(forwarder))
    try:
        client.send(big)
        reply = client.recv()
    finally:
        client.close()
    assert isinstance(reply, LpPacket) and reply.nack_reason == NackReason.NO_ROUTE
    assert reply.fragment == big        # the whole Interest comes back inside the Nack
    drops = _status(forwarder)["counters"]["drops"]
    assert "name_too_long" not in drops and "oversized_frame" not in drops, drops
