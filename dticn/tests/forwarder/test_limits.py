"""Issue 14, fairness limits: InterestLifetime cap, PIT quota per face, name limits.

A local client must not be able to take the forwarder from the others: each test floods
or abuses from one face and checks that another face is still served, and that every
refusal is counted by its reason.
"""

from __future__ import annotations

import time

from dticn.forwarder.face import RecordingFace
from dticn.forwarder.forwarder import Forwarder
from dticn.forwarder.pit import Pit
from dticn.forwarder.settings import ForwarderConfig
from dticn.packets import Data, Interest, LpPacket, NackReason, NameTooLong, name_from_str
from dticn.packets.ndn import decode_data
from dticn.sim.kernel import EventKernel

from .conftest import Node

N = name_from_str


def test_interest_lifetime_is_capped() -> None:
    node = Node(ForwarderConfig(max_interest_lifetime_ms=2000))
    c, p = node.face(), node.face()
    node.fw.add_route(N("/never"), p.face_id)
    c.deliver(node.interest("/never/1", 1, lifetime_ms=(1 << 64) - 1))
    [entry] = list(node.fw.pit)
    assert entry.expiry == 2.0 and node.fw.counters.lifetimes_capped == 1
    node.kernel.run(until=2.5)
    assert len(node.fw.pit) == 0 and node.fw.counters.unsatisfied_interests == 1
    assert "lifetimes_capped" in node.fw.counters.status()


def test_default_lifetime_cap_keeps_delay_tolerant_lifetimes() -> None:
    node = Node()
    c, p = node.face(), node.face()
    node.fw.add_route(N("/dtn"), p.face_id)
    c.deliver(node.interest("/dtn/1", 1, lifetime_ms=1_800_000))  # 30 min: honoured
    assert next(iter(node.fw.pit)).expiry == 1800.0
    assert node.fw.counters.lifetimes_capped == 0


def test_face_flooding_unanswered_interests_cannot_take_the_pit_from_others() -> None:
    node = Node(ForwarderConfig(pit_capacity=300, pit_face_quota=100))
    attacker, victim, silent, producer = node.face(), node.face(), node.face(), node.face()
    node.fw.add_route(N("/never"), silent.face_id)
    node.fw.add_route(N("/good"), producer.face_id)
    for k in range(1000):
        attacker.deliver(node.interest(f"/never/{k}", k, lifetime_ms=(1 << 64) - 1))
    assert len(node.fw.pit) == 100
    assert node.fw.counters.drops["pit_face_quota"] == 900
    nacks = [x for x in node.decoded(attacker) if isinstance(x, LpPacket)]
    assert len(nacks) == 900 and nacks[0].nack_reason == NackReason.CONGESTION
    # a retransmission into the attacker's own entry is not a new one: still accepted
    attacker.deliver(node.interest("/never/5", 99_999))
    assert node.fw.counters.drops["pit_face_quota"] == 900
    for k in range(50):
        victim.deliver(node.interest(f"/good/{k}", 10_000 + k))
        producer.take()
        producer.deliver(node.data(f"/good/{k}"))
    got = node.decoded(victim)
    assert len(got) == 50 and all(isinstance(x, Data) for x in got)


def test_quota_off_reproduces_the_starvation() -> None:
    """The issue's scenario with the quota disabled: the other client is Nacked."""
    node = Node(ForwarderConfig(pit_capacity=300, pit_face_quota=None))
    attacker, victim, silent = node.face(), node.face(), node.face()
    node.fw.add_route(N("/"), silent.face_id)
    for k in range(300):
        attacker.deliver(node.interest(f"/never/{k}", k))
    victim.deliver(node.interest("/good/1", 10_001))
    [nack] = node.decoded(victim)
    assert isinstance(nack, LpPacket) and nack.nack_reason == NackReason.CONGESTION


def interest_of_size(size: int, prefix: str) -> bytes:
    """An Interest of exactly ``size`` bytes (>= 300): ``prefix`` and one long component."""
    def wire(pad: int) -> bytes:
        component = b"\x08\xfd" + pad.to_bytes(2, "big") + b"z" * pad
        return Interest((*N(prefix), component), nonce=1).encode()
    out = wire(size - (len(wire(256)) - 256))
    assert len(out) == size
    return out


def _many_components(n: int) -> bytes:
    return Data(tuple([b"\x08\x00"] * n), b"").encode()


def test_every_name_that_fits_in_a_packet_is_valid_by_default() -> None:
    """Issue 24: the default name limits are the packet limit's, so the 8.6 KB name of a
    4,300-component Data and a name filling an 8,800-byte Interest pass them."""
    node = Node()
    c, p = node.face(), node.face()
    node.fw.add_route(N("/a"), p.face_id)
    c.deliver(_many_components(4300))
    assert node.fw.counters.drops["unsolicited_data"] == 1
    assert "name_too_long" not in node.fw.counters.drops
    big = interest_of_size(8800, "/a")
    c.deliver(big)
    assert p.take() == [big]


def test_configured_name_limits_refuse_long_names_before_splitting_them() -> None:
    cfg = ForwarderConfig(max_name_components=64, max_name_bytes=2048)
    node = Node(cfg)
    c, p = node.face(), node.face()
    node.fw.add_route(N("/a"), p.face_id)
    wire = _many_components(4300)
    c.deliver(wire)
    assert node.fw.counters.drops["name_too_long"] == 1
    long_interest = Interest(tuple([b"\x08\x01a"] * (cfg.max_name_components + 1)), nonce=1)
    c.deliver(long_interest.encode())
    assert node.fw.counters.drops["name_too_long"] == 2 and p.take() == []
    c.deliver(node.interest("/a/ok", 2))
    assert len(p.take()) == 1
    try:
        decode_data(wire, max_name_bytes=cfg.max_name_bytes)
    except NameTooLong:
        pass
    else:
        raise AssertionError("a 8.6 KB name passed a 2 KB limit")


def test_long_name_cost_is_linear_in_its_length() -> None:
    """With the limits lifted, a 4300-component Data costs about 10x a 430-component
    one (it cost ~100x before: every prefix length was sliced and hashed)."""
    cfg = ForwarderConfig(max_name_components=10**6, max_name_bytes=10**6)
    fw = Forwarder(EventKernel(), cfg)
    face = RecordingFace()
    fw.add_face(face)

    def best(n: int) -> float:
        wire = _many_components(n)
        times = []
        for _ in range(9):
            t0 = time.perf_counter()
            face.deliver(wire)
            times.append(time.perf_counter() - t0)
        return min(times)

    small, large = best(430), best(4300)
    assert fw.counters.drops["unsolicited_data"] == 18
    assert large / small < 30, (small, large)


def test_data_matching_probes_only_lengths_in_use() -> None:
    """A CanBePrefix entry still matches a longer Data, in longest-first order, and
    stops matching once erased (the lengths in use are kept per entry)."""
    pit = Pit()
    short = Interest(N("/a"), can_be_prefix=True, nonce=1)
    exact = Interest(N("/a/b/c"), nonce=2)
    pit.insert(short, 0.0)
    pit.insert(exact, 0.0)
    data = Data((*N("/a/b/c"),))
    assert [e.key[0] for e in pit.find_all_data_matches(data)] == [N("/a/b/c"), N("/a")]
    long_data = Data((*N("/a"), *([b"\x08\x00"] * 4000)))
    assert [e.key[0] for e in pit.find_all_data_matches(long_data)] == [N("/a")]
    entry = pit.find(short)
    assert entry is not None
    pit.erase(entry)
    assert pit.find_all_data_matches(long_data) == []
    assert [e.key[0] for e in pit.find_all_data_matches(data)] == [N("/a/b/c")]
