"""The stream framer hands over exactly the frames that were sent, however the byte
stream is cut into reads: frames sliced straight out of a read, a partial frame kept for
the next, oversized frames skipped across reads, 1- and 3-byte TLV lengths."""

from __future__ import annotations

import asyncio
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from dticn.forwarder.forwarder import Forwarder
from dticn.net.stream import MAX_FRAME, StreamProtocol
from dticn.packets.tlv import encode_tlv
from dticn.sim.kernel import EventKernel


class _Transport(asyncio.WriteTransport):
    def write(self, data: bytes) -> None:  # type: ignore[override]
        pass

    def is_closing(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return 0

    def get_extra_info(self, name: str, default: object = None) -> object:
        return ("127.0.0.1", 1)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.integers(0, 3000), min_size=1, max_size=12), st.integers(0, 2**32))
def test_every_frame_arrives_whole_and_in_order(sizes: list[int], seed: int) -> None:
    rng = random.Random(seed)
    frames = [encode_tlv(0x50 + i % 4, bytes([i % 256]) * n) for i, n in enumerate(sizes)]
    oversized = encode_tlv(0x64, b"\x00" * (MAX_FRAME + 10))
    stream_parts = list(frames)
    stream_parts.insert(rng.randrange(len(frames) + 1), oversized)
    stream = b"".join(stream_parts)
    fw = Forwarder(EventKernel())
    proto = StreamProtocol(fw, "tcp")
    proto.connection_made(_Transport())
    got: list[bytes] = []
    assert proto.face is not None
    proto.face.set_receiver(lambda face, wire: got.append(wire))
    pos = 0
    while pos < len(stream):
        cut = pos + rng.choice([1, 2, 3, rng.randrange(1, 9000)])
        proto.data_received(stream[pos:cut])
        pos = cut
    assert got == frames
    assert fw.counters.drops["oversized_frame"] == 1
