"""Hostile input never crashes the decoder, the forwarder or the stream framer.

Property: ``decode_packet`` returns or raises ``DecodeError`` (nothing else), and the
forwarder, fed anything, keeps its tables bounded and still forwards a valid Interest.
Thousands of examples per property (hypothesis, no deadline, derandomized for CI).
"""

from __future__ import annotations

import asyncio
import contextlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dticn.forwarder.face import RecordingFace
from dticn.forwarder.forwarder import Forwarder
from dticn.forwarder.settings import ForwarderConfig
from dticn.packets import (
    Data,
    DecodeError,
    Interest,
    LpPacket,
    decode_packet,
    encode_nack,
    fragment,
    name_from_str,
)
from dticn.packets.tlv import encode_var
from dticn.sim.kernel import EventKernel

FUZZ = settings(
    max_examples=3000, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

VALID = [
    Interest(name_from_str("/a/b"), nonce=1, lifetime_ms=4000, can_be_prefix=True).encode(),
    Interest(name_from_str("/p/seg=1"), nonce=2, hop_limit=4, app_parameters=b"xy").encode(),
    Data(name_from_str("/a/b/c"), b"hello", freshness_ms=1000).encode(),
    encode_nack(Interest(name_from_str("/n"), nonce=3).encode(), 150),
    *fragment(Data(name_from_str("/big"), b"z" * 400).encode(), 127, 10),
    LpPacket(fragment=b"\x05\x00", pit_token=b"t", congestion_mark=1).encode(),
]
TYPES = [0x05, 0x06, 0x07, 0x08, 0x01, 0x02, 0x0A, 0x0C, 0x12, 0x14, 0x15, 0x16, 0x17, 0x18,
         0x19, 0x1A, 0x1B, 0x1E, 0x21, 0x22, 0x24, 0x2C, 0x2E, 0x50, 0x51, 0x52, 0x53, 0x62,
         0x64, 0x320, 0x321, 0x32C, 0x340, 0xFD, 0xFFFF, 0x10000]


def tlv_trees() -> st.SearchStrategy[bytes]:
    leaf = st.binary(max_size=12)
    def node(children: st.SearchStrategy[bytes]) -> st.SearchStrategy[bytes]:
        return st.tuples(
            st.sampled_from(TYPES), st.lists(children, max_size=5),
            st.integers(min_value=-2, max_value=2),
        ).map(lambda t: encode_var(t[0]) + encode_var(
            max(0, len(b"".join(t[1])) + t[2])) + b"".join(t[1]))
    return st.recursive(leaf, node, max_leaves=20).map(
        lambda b: b if b[:1] in (b"\x05", b"\x06", b"\x64") else b"\x05" + encode_var(len(b)) + b
    )


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    wire = bytearray(draw(st.sampled_from(VALID)))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "cut", "insert", "len"]))
        if not wire:
            break
        i = draw(st.integers(0, len(wire) - 1))
        if op == "flip":
            wire[i] = draw(st.integers(0, 255))
        elif op == "cut":
            del wire[i:]
        elif op == "insert":
            wire[i:i] = draw(st.binary(min_size=1, max_size=8))
        elif len(wire) > 1:
            wire[1] = draw(st.integers(0, 255))
    return bytes(wire)


inputs = st.one_of(st.binary(max_size=600), mutated(), tlv_trees())


def _decode_or_decode_error(wire: bytes) -> None:
    with contextlib.suppress(DecodeError):
        decode_packet(wire)


@pytest.mark.slow
@FUZZ
@given(inputs)
def test_decoder_only_raises_decode_error(wire: bytes) -> None:
    _decode_or_decode_error(wire)


def _forwarder() -> tuple[EventKernel, Forwarder, RecordingFace, RecordingFace]:
    kernel = EventKernel()
    fw = Forwarder(kernel, ForwarderConfig(pit_capacity=64, cs_capacity=32))
    hostile, upstream = RecordingFace(), RecordingFace()
    fw.add_face(hostile)
    fw.add_face(upstream)
    fw.add_route((), upstream.face_id)
    return kernel, fw, hostile, upstream


@pytest.mark.slow
@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(inputs, min_size=1, max_size=30), st.floats(0, 10))
def test_forwarder_survives_any_frames(frames: list[bytes], dt: float) -> None:
    kernel, fw, hostile, upstream = _forwarder()
    for f in frames:
        hostile.deliver(f)
        upstream.deliver(f)
        kernel.run(until=kernel.now() + dt / len(frames))
    assert len(fw.pit) <= 64 and len(fw.cs) <= 32 + fw.cs.pinned_capacity
    upstream.take()
    hostile.deliver(Interest(name_from_str("/still/works"), nonce=999_999).encode())
    assert any(w == Interest(name_from_str("/still/works"), nonce=999_999).encode()
               for w in upstream.take()) or fw.dead_nonces.find(
        name_from_str("/still/works"), 999_999, kernel.now())


class _Transport(asyncio.WriteTransport):
    def __init__(self) -> None:
        super().__init__()
        self.out = bytearray()

    def write(self, data: bytes) -> None:  # type: ignore[override]
        self.out += data

    def is_closing(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return 0

    def get_extra_info(self, name: str, default: object = None) -> object:
        return ("127.0.0.1", 1)


@pytest.mark.slow
@settings(max_examples=1000, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(st.binary(max_size=300) | mutated(), max_size=8), st.integers(1, 64))
def test_stream_framer_survives_any_byte_stream(chunks: list[bytes], split: int) -> None:
    from dticn.net.stream import StreamProtocol

    _, fw, _, _ = _forwarder()
    proto = StreamProtocol(fw, "tcp")
    transport = _Transport()
    proto.connection_made(transport)
    stream = b"".join(chunks)
    for i in range(0, len(stream), split):
        proto.data_received(stream[i : i + split])
    assert proto.face is not None and not proto.face.closed
    assert fw.counters.drops["internal_error"] == 0
