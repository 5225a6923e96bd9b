"""FIB, PIT, CS and dead nonce list on their own."""

from __future__ import annotations

import pytest

from dticn.forwarder.cs import ContentStore
from dticn.forwarder.dead_nonce import DeadNonceList
from dticn.forwarder.fib import Fib
from dticn.forwarder.pit import Pit
from dticn.packets import Data, Interest, name_from_str

N = name_from_str


def test_fib_longest_prefix_match_and_erase() -> None:
    fib = Fib()
    fib.insert(N("/a"), 300)
    fib.insert(N("/a/b"), 301, cost=5)
    fib.insert(N("/a/b"), 302, cost=1)
    entry = fib.find_longest_prefix_match(N("/a/b/c"))
    assert entry is not None and [h.face_id for h in entry.nexthops] == [302, 301]
    assert fib.find_longest_prefix_match(N("/a/x")).prefix == N("/a")  # type: ignore[union-attr]
    assert fib.find_longest_prefix_match(N("/z")) is None
    fib.remove_face(302)
    fib.remove_face(301)
    assert fib.find_longest_prefix_match(N("/a/b/c")).prefix == N("/a")  # type: ignore[union-attr]
    assert fib.erase(N("/a")) and len(fib) == 0


def test_fib_is_bounded() -> None:
    fib = Fib(max_entries=2)
    fib.insert(N("/a"), 1)
    fib.insert(N("/b"), 1)
    with pytest.raises(OverflowError, match="max_entries"):
        fib.insert(N("/c"), 1)


def test_pit_aggregates_by_name_and_selectors_and_is_bounded() -> None:
    pit = Pit(capacity=2)
    e1, new1 = pit.insert(Interest(N("/a"), nonce=1), 0.0)
    e2, new2 = pit.insert(Interest(N("/a"), nonce=2), 0.0)
    e3, new3 = pit.insert(Interest(N("/a"), can_be_prefix=True, nonce=3), 0.0)
    assert new1 and not new2 and e1 is e2 and new3 and e3 is not e1
    assert pit.insert(Interest(N("/b"), nonce=4), 0.0) == (None, False)
    matches = pit.find_all_data_matches(Data(N("/a/x")))
    assert matches == [e3]
    assert set(map(id, pit.find_all_data_matches(Data(N("/a"))))) == {id(e1), id(e3)}
    pit.erase(e1)
    pit.erase(e1)
    assert len(pit) == 1 and pit.find(Interest(N("/a"))) is None


def test_cs_lru_pinned_and_freshness() -> None:
    cs = ContentStore(capacity=2, pinned_capacity=1)
    cs.insert(Data(N("/p"), b"pinned"), 0.0, pinned=True)
    cs.insert(Data(N("/a"), b"a", freshness_ms=1000), 0.0)
    cs.insert(Data(N("/b"), b"b"), 0.0)
    assert cs.find(Interest(N("/a")), 0.0) is not None  # /a becomes most recent
    cs.insert(Data(N("/c"), b"c"), 0.0)  # evicts /b
    assert cs.find(Interest(N("/b")), 0.0) is None
    assert cs.find(Interest(N("/p")), 0.0).content == b"pinned"  # type: ignore[union-attr]
    assert not cs.insert(Data(N("/q")), 0.0, pinned=True)
    assert cs.find(Interest(N("/a"), must_be_fresh=True), 0.5) is not None
    assert cs.find(Interest(N("/a"), must_be_fresh=True), 1.5) is None
    assert cs.find(Interest(N("/c"), must_be_fresh=True), 0.0) is None  # no freshness
    assert len(cs) == 3


def test_cs_can_be_prefix_finds_longer_names() -> None:
    cs = ContentStore()
    cs.insert(Data(N("/x/1/seg=0"), b"s0"), 0.0)
    cs.insert(Data(N("/x/10"), b"ten"), 0.0)
    cs.insert(Data(N("/y"), b"y"), 0.0)
    hit = cs.find(Interest(N("/x/1"), can_be_prefix=True), 0.0)
    assert hit is not None and hit.content == b"s0"
    assert cs.find(Interest(N("/x/1")), 0.0) is None
    assert cs.find(Interest(N("/z"), can_be_prefix=True), 0.0) is None
    assert cs.erase(N("/x/1/seg=0"))
    assert cs.find(Interest(N("/x/1"), can_be_prefix=True), 0.0) is None


def test_dead_nonce_list_expires_and_is_bounded() -> None:
    dnl = DeadNonceList(lifetime=6.0, capacity=2)
    dnl.insert(N("/a"), 1, 0.0)
    assert dnl.find(N("/a"), 1, 5.9) and not dnl.find(N("/a"), 2, 0.0)
    assert not dnl.find(N("/a"), 1, 6.0)
    for k in range(5):
        dnl.insert(N("/b"), k, 10.0)
    assert len(dnl) == 2
