"""Per-face packet kinds (NFD's NInInterests ... NOutNacks) are counted where the forwarder
already knows the kind: in once a frame decoded, out from the kind it sends with."""

from __future__ import annotations

from dticn.packets import Data, LpPacket, NackReason, encode_nack, name_from_str
from dticn.packets.lp import fragment

from .conftest import Node

N = name_from_str


def _kinds(face) -> tuple[int, ...]:  # type: ignore[no-untyped-def]
    c = face.counters
    return (c.in_interests, c.in_data, c.in_nacks, c.out_interests, c.out_data, c.out_nacks)


def test_an_exchange_a_nack_and_fragments_count_once_per_packet() -> None:
    node = Node()
    consumer, producer = node.face(), node.face(mtu=127)
    node.fw.add_route(N("/a"), producer.face_id)
    consumer.deliver(node.interest("/a/1", 1))
    assert len(producer.take()) == 1
    data = Data(N("/a/1"), b"x" * 300).encode()
    pieces = fragment(data, 127, 0, 2)
    assert len(pieces) > 2
    for piece in pieces:
        producer.deliver(piece)
    assert consumer.take() == [data]
    consumer.deliver(node.interest("/a/2", 2))
    producer.take()
    producer.deliver(encode_nack(node.interest("/a/2", 2), NackReason.NO_ROUTE))
    [nack] = node.decoded(consumer)
    assert isinstance(nack, LpPacket) and nack.nack_reason == NackReason.NO_ROUTE
    consumer.deliver(b"\x05\x03\x07\x01")        # does not decode: a drop, no kind
    consumer.deliver(b"\x64\x05\x00")            # a truncated LpPacket: the same
    assert node.fw.counters.drops["malformed"] == 2
    assert _kinds(consumer) == (2, 0, 0, 0, 1, 1)
    assert _kinds(producer) == (0, 1, 1, 2, 0, 0)
    assert producer.counters.in_frames == len(pieces) + 1
