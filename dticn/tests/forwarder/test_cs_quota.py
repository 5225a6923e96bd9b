"""Issue 14: Content Store entries are charged to the face the Data came from.

A producer face answering a flood of Interests must not evict every other face's
cached Data; the prefix index (name tree) must answer CanBePrefix exactly as a scan
of the stored names in order would.
"""

from __future__ import annotations

import gc
import random
import time

import pytest

from dticn.forwarder.cs import ContentStore
from dticn.forwarder.settings import ForwarderConfig
from dticn.packets import Data, Interest, name_from_str
from dticn.packets.name import Name

from .conftest import Node

N = name_from_str


def _fetch_a(node: Node, consumer, producer_a, first_nonce: int) -> int:  # type: ignore[no-untyped-def]
    """Ask for /a/0..39; the producer answers what reaches it. Return how many did."""
    asked = 0
    for k in range(40):
        consumer.deliver(node.interest(f"/a/{k}", first_nonce + k))
        for _wire in producer_a.take():
            asked += 1
            producer_a.deliver(node.data(f"/a/{k}", b"A"))
    consumer.take()
    return asked


@pytest.mark.parametrize("share", [0.5, None])
def test_a_flooding_producer_face_cannot_evict_the_other_faces_data(
    share: float | None,
) -> None:
    node = Node(ForwarderConfig(cs_capacity=100, cs_face_share=share))
    consumer, flooder_app = node.face(), node.face()
    producer_a, producer_b = node.face(), node.face()
    node.fw.add_route(N("/a"), producer_a.face_id)
    node.fw.add_route(N("/b"), producer_b.face_id)
    assert _fetch_a(node, consumer, producer_a, 1) == 40
    # producer B answers a flood of 1000 Interests for distinct names
    for k in range(1000):
        flooder_app.deliver(node.interest(f"/b/{k}", 10_000 + k))
        producer_b.take()
        producer_b.deliver(node.data(f"/b/{k}", b"B"))
    flooder_app.take()
    cs, evictions = node.fw.cs, node.fw.counters.cs_evictions
    again = _fetch_a(node, consumer, producer_a, 50_000)
    if share is None:  # the behaviour before: B's Data pushed all of A's out
        assert again == 40 and evictions["capacity"] >= 940
    else:
        assert again == 0                                  # every /a/k from the cache
        assert cs.face_entries(producer_b.face_id) == 50   # half of 100
        assert cs.face_entries(producer_a.face_id) == 40
        assert evictions == {"face_quota": 950}
        assert node.fw.counters.status()["cs_evictions"] == {"face_quota": 950}


def test_face_quota_replaces_the_faces_own_least_recently_used_entry() -> None:
    cs = ContentStore(capacity=10, face_quota=3)
    for k in range(3):
        cs.insert(Data(N(f"/f/{k}")), 0.0, face_id=7)
    assert cs.find(Interest(N("/f/0")), 0.0) is not None   # /f/0 used: /f/1 is the oldest
    cs.insert(Data(N("/f/3")), 0.0, face_id=7)
    assert cs.find(Interest(N("/f/1")), 0.0) is None
    assert {k for k in range(4) if cs.find(Interest(N(f"/f/{k}")), 0.0)} == {0, 2, 3}
    cs.insert(Data(N("/local")), 0.0)                       # injected: charged to no face
    assert cs.face_entries(7) == 3 and len(cs) == 4
    assert cs.erase(N("/f/2")) and cs.face_entries(7) == 2
    cs.insert(Data(N("/f/0")), 0.0, pinned=True)            # pinned: leaves the face's share
    assert cs.face_entries(7) == 1


def test_cs_face_share_is_checked() -> None:
    assert ForwarderConfig(cs_capacity=10, cs_face_share=0.01).cs_face_quota() == 1
    with pytest.raises(ValueError, match="cs_face_share"):
        Node(ForwarderConfig(cs_face_share=1.5))


def test_prefix_lookups_match_a_scan_of_the_stored_names_in_order() -> None:
    rng = random.Random(14)
    cs = ContentStore(capacity=60, pinned_capacity=10, face_quota=25)
    stored: dict[Name, float] = {}                          # name -> stale_at

    def expected(prefix: Name, fresh_only: bool, now: float) -> Name | None:
        names = sorted(n for n in stored if n[: len(prefix)] == prefix
                       and not (fresh_only and stored[n] <= now))
        return names[0] if names else None

    for step in range(3000):
        name = tuple(f"/{rng.randrange(4)}/{rng.randrange(4)}/{rng.randrange(6)}"
                     .split("/")[1 : 2 + rng.randrange(3)])
        n = N("/" + "/".join(name))
        op = rng.random()
        now = step * 0.01
        if op < 0.5:
            fresh = rng.choice([None, 100, 5000])
            cs.insert(Data(n, freshness_ms=fresh), now, face_id=rng.randrange(3),
                      pinned=rng.random() < 0.03)
        elif op < 0.6:
            cs.erase(n)
        else:
            fresh_only = rng.random() < 0.5
            hit = cs.find(Interest(n, can_be_prefix=True, must_be_fresh=fresh_only), now)
            # the model is rebuilt from the CS's own tables (evictions are its business)
            stored = {name: e.stale_at for name, e in (*cs._lru.items(), *cs._pinned.items())}
            want = expected(n, fresh_only, now)
            assert (hit.name if hit is not None else None) == want
    assert cs._tree is not None   # built on the first CanBePrefix lookup


def test_a_prefix_lookup_over_many_stale_names_is_bounded() -> None:
    cs = ContentStore(capacity=20_000, face_quota=None)
    for k in range(10_000):
        cs.insert(Data(N(f"/a/{k:05d}"), freshness_ms=1), 0.0, face_id=1)
    interest = Interest(N("/a"), can_be_prefix=True, must_be_fresh=True)
    assert cs.find(interest, 5.0) is None  # builds the prefix index (once, not timed)
    gc.disable()  # a collection of other tests' garbage is not this lookup's cost
    try:
        started = time.process_time()
        for _ in range(10):
            assert cs.find(interest, 5.0) is None        # every one stale
        per_lookup = (time.process_time() - started) / 10
    finally:
        gc.enable()
    assert cs.prefix_scans_cut == 11
    assert per_lookup < 0.002, f"{per_lookup * 1e3:.2f} ms per lookup"
    # not MustBeFresh: the first name in order answers at once
    hit = cs.find(Interest(N("/a"), can_be_prefix=True), 5.0)
    assert hit is not None and hit.name == N("/a/00000")
