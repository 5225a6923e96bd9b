"""Forwarder pipelines on the EventKernel: recorded actions, moved clock."""

from __future__ import annotations

from dticn.forwarder.face import CallbackFace, LinkType
from dticn.forwarder.hooks import ForwarderHooks, UnsolicitedDataVerdict
from dticn.forwarder.retx import RetxPolicy
from dticn.forwarder.settings import ForwarderConfig
from dticn.packets import (
    ContentType,
    Data,
    Interest,
    LpPacket,
    NackReason,
    decode_packet,
    name_from_str,
)

from .conftest import Node

N = name_from_str


def test_interest_forwarded_data_returned_then_cache_hit(node: Node) -> None:
    consumer, producer = node.face(), node.face()
    node.fw.add_route(N("/xid"), producer.face_id)
    consumer.deliver(node.interest("/xid/1", 1))
    [fwd] = node.decoded(producer)
    assert isinstance(fwd, Interest) and fwd.name == N("/xid/1") and fwd.nonce == 1
    producer.deliver(node.data("/xid/1", b"v1", freshness_ms=10_000))
    [got] = node.decoded(consumer)
    assert isinstance(got, Data) and got.content == b"v1"
    assert len(node.fw.pit) == 0
    consumer.deliver(node.interest("/xid/1", 2))
    [hit] = node.decoded(consumer)
    assert isinstance(hit, Data) and hit.content == b"v1"
    assert producer.sent == [] and node.fw.counters.cs_hits == 1


def test_can_be_prefix_interest_gets_longer_name(node: Node) -> None:
    consumer, producer = node.face(), node.face()
    node.fw.add_route(N("/x"), producer.face_id)
    consumer.deliver(node.interest("/x", 1, can_be_prefix=True))
    producer.deliver(node.data("/x/v=1"))
    [got] = node.decoded(consumer)
    assert isinstance(got, Data) and got.name == N("/x/v=1")


def test_no_route_nacks_with_consumers_interest(node: Node) -> None:
    consumer = node.face()
    wire = node.interest("/nowhere", 7)
    consumer.deliver(wire)
    [nack] = node.decoded(consumer)
    assert isinstance(nack, LpPacket) and nack.nack_reason == NackReason.NO_ROUTE
    assert nack.fragment == wire
    assert node.fw.counters.drops["no_route"] == 1 and len(node.fw.pit) == 0


def test_aggregation_sends_one_upstream_and_data_to_both(node: Node) -> None:
    c1, c2, producer = node.face(), node.face(), node.face()
    node.fw.add_route(N("/a"), producer.face_id)
    c1.deliver(node.interest("/a/1", 1))
    c2.deliver(node.interest("/a/1", 2))
    assert len(producer.take()) == 1 and node.fw.counters.aggregated == 1
    producer.deliver(node.data("/a/1"))
    assert len(c1.take()) == 1 and len(c2.take()) == 1


def test_consumer_retransmission_is_forwarded_again(node: Node) -> None:
    c, p = node.face(), node.face()
    node.fw.add_route(N("/a"), p.face_id)
    c.deliver(node.interest("/a/1", 1))
    node.kernel.run(until=1.0)
    c.deliver(node.interest("/a/1", 2))
    assert [x.nonce for x in node.decoded(p)] == [1, 2]  # type: ignore[union-attr]


def test_duplicate_nonce_from_other_face_is_a_loop(node: Node) -> None:
    c1, c2, p = node.face(), node.face(), node.face()
    node.fw.add_route(N("/a"), p.face_id)
    c1.deliver(node.interest("/a/1", 5))
    c2.deliver(node.interest("/a/1", 5))
    [nack] = node.decoded(c2)
    assert isinstance(nack, LpPacket) and nack.nack_reason == NackReason.DUPLICATE
    assert node.fw.counters.drops["loop"] == 1


def test_dead_nonce_list_catches_late_loop(node: Node) -> None:
    c, p = node.face(), node.face()
    node.fw.add_route(N("/a"), p.face_id)
    c.deliver(node.interest("/a/1", 5, lifetime_ms=100))
    node.kernel.run(until=1.0)
    assert len(node.fw.pit) == 0 and node.fw.counters.unsatisfied_interests == 1
    p.deliver(node.interest("/a/1", 5))  # comes back around
    assert node.fw.counters.drops["loop"] == 1


def test_expiry_then_late_data_is_unsolicited(node: Node) -> None:
    c, p = node.face(), node.face()
    node.fw.add_route(N("/a"), p.face_id)
    c.deliver(node.interest("/a/1", 1, lifetime_ms=4000))
    node.kernel.run(until=3.999)
    assert len(node.fw.pit) == 1
    node.kernel.run(until=4.0)
    assert len(node.fw.pit) == 0
    p.deliver(node.data("/a/1"))
    assert c.sent == [] and node.fw.counters.drops["unsolicited_data"] == 1


def _sent_times(node: Node, face_sends: list[float]):  # type: ignore[no-untyped-def]
    return lambda frame: face_sends.append(node.kernel.now())


def test_in_network_retransmission_ccn_lite_4_1000_4() -> None:
    node = Node(ForwarderConfig(default_retx=RetxPolicy.from_triple(4, 1000, 4)))
    c = node.face()
    times: list[float] = []
    p = CallbackFace(_sent_times(node, times))
    node.fw.add_face(p)
    node.fw.add_route(N("/xid"), p.face_id)
    c.deliver(node.interest("/xid/1", 1, lifetime_ms=64_000))
    node.kernel.run(until=10.0)
    # sent at 0, retransmitted at 1, 2, 3; the entry dies at 4 s (forwarder lifetime)
    assert times == [0.0, 1.0, 2.0, 3.0]
    assert node.fw.counters.retransmissions == 3 and len(node.fw.pit) == 0


def test_in_network_retransmission_count_limits() -> None:
    node = Node(ForwarderConfig(default_retx=RetxPolicy.from_triple(64, 1000, 4)))
    c = node.face()
    times: list[float] = []
    p = CallbackFace(_sent_times(node, times))
    node.fw.add_face(p)
    node.fw.add_route(N("/xid"), p.face_id)
    c.deliver(node.interest("/xid/1", 1, lifetime_ms=64_000))
    node.kernel.run(until=30.0)
    assert times == [0.0, 1.0, 2.0, 3.0, 4.0] and len(node.fw.pit) == 1
    node.kernel.run(until=64.0)
    assert len(node.fw.pit) == 0


def test_consumer_retransmission_only_4_0_0_and_per_prefix_policy() -> None:
    node = Node(ForwarderConfig(default_retx=RetxPolicy.from_triple(4, 0, 0)))
    node.fw.retx.insert(N("/inr"), RetxPolicy.from_triple(4, 1000, 4))
    c = node.face()
    times: list[float] = []
    p = CallbackFace(_sent_times(node, times))
    node.fw.add_face(p)
    node.fw.add_route(N("/"), p.face_id)
    c.deliver(node.interest("/cr/1", 1, lifetime_ms=64_000))
    node.kernel.run(until=10.0)
    assert times == [0.0]
    c.deliver(node.interest("/inr/1", 2, lifetime_ms=64_000))
    node.kernel.run(until=20.0)
    assert times == [0.0, 10.0, 11.0, 12.0, 13.0]


def test_per_face_retx_policy() -> None:
    node = Node()
    c = node.face()
    times: list[float] = []
    p = CallbackFace(_sent_times(node, times))
    p.retx_policy = RetxPolicy.from_triple(64, 15_000, 4)
    node.fw.add_face(p)
    node.fw.add_route(N("/"), p.face_id)
    c.deliver(node.interest("/x/1", 1, lifetime_ms=4_000))
    node.kernel.run(until=100.0)
    assert times == [0.0, 15.0, 30.0, 45.0, 60.0]


def test_upstream_nack_propagates_downstream(node: Node) -> None:
    c, p = node.face(), node.face()
    node.fw.add_route(N("/a"), p.face_id)
    c.deliver(node.interest("/a/1", 3))
    [fwd] = p.take()
    from dticn.packets import encode_nack

    p.deliver(encode_nack(fwd, NackReason.CONGESTION))
    [nack] = node.decoded(c)
    assert isinstance(nack, LpPacket) and nack.nack_reason == NackReason.CONGESTION
    assert len(node.fw.pit) == 0


def test_garbage_is_dropped_and_counted_face_stays_usable(node: Node) -> None:
    c, p = node.face(), node.face()
    node.fw.add_route(N("/a"), p.face_id)
    for junk in (b"", b"\x05", b"\x05\xff", b"\x64\x02\x50\x00", b"\x07\x00", b"\xff" * 20):
        c.deliver(junk)
    assert node.fw.counters.drops["malformed"] >= 5
    c.deliver(node.interest("/a/1", 1))
    assert len(p.take()) == 1 and not c.closed


def test_pit_flood_is_bounded_and_nacked() -> None:
    node = Node(ForwarderConfig(pit_capacity=100))
    c, p = node.face(), node.face()
    node.fw.add_route(N("/a"), p.face_id)
    for k in range(1000):
        c.deliver(node.interest(f"/a/{k}", k))
    assert len(node.fw.pit) == 100 and node.fw.counters.drops["pit_full"] == 900
    nacks = [x for x in node.decoded(c) if isinstance(x, LpPacket)]
    assert len(nacks) == 900 and nacks[0].nack_reason == NackReason.CONGESTION


def test_localhost_scope_and_hop_limit(node: Node) -> None:
    remote = node.face()
    remote.deliver(node.interest("/localhost/nfd/rib/list", 1))
    assert node.fw.counters.drops["localhost_violation"] == 1
    p = node.face()
    node.fw.add_route(N("/h"), p.face_id)
    remote.deliver(node.interest("/h/0", 2, hop_limit=0))
    assert node.fw.counters.drops["hop_limit_zero"] == 1
    remote.deliver(node.interest("/h/1", 3, hop_limit=5))
    [fwd] = node.decoded(p)
    assert isinstance(fwd, Interest) and fwd.hop_limit == 4


def test_missing_nonce_is_added(node: Node) -> None:
    c, p = node.face(), node.face()
    node.fw.add_route(N("/a"), p.face_id)
    c.deliver(Interest(N("/a/1")).encode())
    [fwd] = node.decoded(p)
    assert isinstance(fwd, Interest) and fwd.nonce is not None


class GatewayHooks(ForwarderHooks):
    """What a RICE-like and a push gateway would do, minimally."""

    def __init__(self) -> None:
        self.taken_over: list[str] = []
        self.reflexive: list[Interest] = []

    def on_interest_propagate(self, fw, in_face, interest, entry):  # type: ignore[no-untyped-def]
        if interest.name[:1] != N("/lora"):
            return False
        hint = Data(interest.name, b"WAIT+32", content_type=ContentType.NACK)
        fw.answer_interest(entry, hint)
        self.taken_over.append("x")
        return True

    def on_unsolicited_data(self, fw, in_face, data):  # type: ignore[no-untyped-def]
        return UnsolicitedDataVerdict.CACHE_PINNED

    def on_reflexive_interest(self, fw, in_face, interest):  # type: ignore[no-untyped-def]
        self.reflexive.append(interest)
        return True


def test_hooks_wait_hint_push_and_reflexive() -> None:
    hooks = GatewayHooks()
    node = Node(hooks=hooks)
    c, radio = node.face(), node.face()
    node.fw.add_route(N("/lora"), radio.face_id)
    c.deliver(node.interest("/lora/node1/xid/1", 1))
    [hint] = node.decoded(c)
    assert isinstance(hint, Data) and hint.content == b"WAIT+32" and radio.sent == []
    radio.deliver(node.data("/RPT/node1/xid/2", b"pushed"))
    c.deliver(node.interest("/RPT/node1/xid/2", 2))
    [cached] = node.decoded(c)
    assert isinstance(cached, Data) and cached.content == b"pushed"
    node.fw.add_reflexive_prefix(N("/RNP"))
    c.deliver(node.interest("/RNP/abc", 3))
    assert [i.name for i in hooks.reflexive] == [N("/RNP/abc")]


def test_multicast_strategy_per_prefix(node: Node) -> None:
    c, p1, p2 = node.face(), node.face(), node.face()
    node.fw.add_route(N("/m"), p1.face_id)
    node.fw.add_route(N("/m"), p2.face_id, cost=10)
    node.fw.set_strategy(N("/m"), "multicast")
    c.deliver(node.interest("/m/1", 1))
    assert len(p1.take()) == 1 and len(p2.take()) == 1
    c.deliver(node.interest("/other", 2))
    assert node.fw.counters.drops["no_route"] == 1


def test_two_forwarders_over_a_lora_mtu_link_fragment_large_data() -> None:
    """Consumer - A ==(MTU 127, 1 s latency)== B - producer on one kernel."""
    gw, node_side = Node(), None
    b = Node.__new__(Node)
    b.kernel = gw.kernel
    from dticn.forwarder.forwarder import Forwarder

    b.fw = Forwarder(gw.kernel)
    node_side = b
    link_ab = CallbackFace(
        lambda f: gw.kernel.call_later(1.0, link_ba.deliver, f), mtu=127,
        link_type=LinkType.MULTI_ACCESS,
    )
    link_ba = CallbackFace(
        lambda f: gw.kernel.call_later(1.0, link_ab.deliver, f), mtu=127,
        link_type=LinkType.MULTI_ACCESS,
    )
    gw.fw.add_face(link_ab)
    node_side.fw.add_face(link_ba)
    consumer = gw.face()
    producer = node_side.face()
    gw.fw.add_route(N("/big"), link_ab.face_id)
    node_side.fw.add_route(N("/big"), producer.face_id)
    consumer.deliver(Node.interest("/big/1", 1))
    gw.kernel.run(until=1.5)
    [req] = producer.take()
    payload = bytes(range(256)) * 2
    producer.deliver(Node.data("/big/1", payload))
    assert link_ba.counters.out_fragments > 1
    gw.kernel.run(until=5.0)
    [got] = [decode_packet(w) for w in consumer.take()]
    assert isinstance(got, Data) and got.content == payload and decode_packet(req)


def test_retransmission_with_fresh_nonce_for_multi_access_links() -> None:
    policy = RetxPolicy(pit_lifetime=10.0, retx_interval=1.0, max_retx=2, fresh_nonce=True)
    node = Node(ForwarderConfig(default_retx=policy))
    c, p = node.face(), node.face()
    node.fw.add_route(N("/lora"), p.face_id)
    c.deliver(node.interest("/lora/1", 1, lifetime_ms=10_000))
    node.kernel.run(until=5.0)
    nonces = [x.nonce for x in node.decoded(p)]  # type: ignore[union-attr]
    assert len(nonces) == 3 and len(set(nonces)) == 3 and nonces[0] == 1
    p.deliver(node.data("/lora/1"))  # Data still satisfies the consumer
    assert len(c.take()) == 1


def test_best_route_tries_next_hop_after_nack(node: Node) -> None:
    from dticn.packets import encode_nack

    c, p1, p2 = node.face(), node.face(), node.face()
    node.fw.add_route(N("/a"), p1.face_id, cost=1)
    node.fw.add_route(N("/a"), p2.face_id, cost=5)
    c.deliver(node.interest("/a/1", 3))
    [first] = p1.take()
    p1.deliver(encode_nack(first, NackReason.NO_ROUTE))
    assert c.sent == [] and len(p2.take()) == 1
    p2.deliver(node.data("/a/1"))
    [got] = node.decoded(c)
    assert isinstance(got, Data)


def test_implicit_digest_interest_matches_pit_and_cs(node: Node) -> None:
    from dticn.packets.matching import full_name

    c, p = node.face(), node.face()
    node.fw.add_route(N("/d"), p.face_id)
    data = Data(N("/d/1"), b"exact bytes")
    exact = full_name(data)
    c.deliver(Interest(exact, nonce=1).encode())
    assert len(p.take()) == 1
    p.deliver(data.encode())
    [got] = node.decoded(c)
    assert isinstance(got, Data) and got.content == b"exact bytes"
    c.deliver(Interest(exact, nonce=2).encode())  # from the CS now
    assert len(c.take()) == 1 and p.sent == []
    wrong = (*N("/d/1"), b"\x01\x20" + bytes(32))
    c.deliver(Interest(wrong, nonce=3).encode())
    assert c.sent == [] and len(p.take()) == 1  # cache miss, forwarded


def test_lora_face_fragments_consecutive_packets_into_disjoint_sequences() -> None:
    from dticn.forwarder.face import RecordingFace
    from dticn.packets import Reassembler, decode_lp_packet

    lora = RecordingFace(mtu=127, sequence_width=2)
    a = Node.data("/a", b"A" * 400)
    b = Node.data("/b", b"B" * 400)
    lora.send(a)
    lora.send(b)
    frames = lora.take()
    assert all(len(f) <= 127 for f in frames) and lora.counters.out_fragments == len(frames)
    half = len(frames) // 2
    interleaved = [f for pair in zip(frames[:half], frames[half:], strict=True) for f in pair]
    r = Reassembler()
    done = [p for p in (r.add(decode_lp_packet(f), 0.0) for f in interleaved) if p]
    assert sorted(done) == sorted([a, b])
