"""Content Store: bounded LRU cache of Data, plus pinned entries, with freshness.

Pinned entries (a gateway keeping pushed or prefetched Data for a consumer that comes
back after a wait hint) are never evicted by LRU; they have their own bound.

Every LRU entry is charged to the face its Data came from; with ``face_quota`` set, a
face that already holds that many entries replaces its own least recently used one
instead of the whole cache's, so one producer face answering a flood of Interests
cannot evict every other face's Data (evictions are counted by reason in
``evictions``: ``capacity``, ``face_quota``). Locally injected Data (no face) is not
charged.

Exact-name lookups are dict probes. CanBePrefix lookups need names ordered by prefix;
that index (a name tree, :class:`_NameTree`) is built only when the first CanBePrefix
lookup comes and kept from then on, so a cache that is only asked for exact names does
no prefix bookkeeping on insert and evict (it used to keep one sorted list of every
name, an O(n) insert). A lookup examines at most ``MAX_PREFIX_CANDIDATES`` names, so
its cost is bounded whatever is cached under the prefix.
"""

from __future__ import annotations

import bisect
from collections import Counter, OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass

from dticn.packets.matching import implicit_digest
from dticn.packets.name import TYPE_IMPLICIT_SHA256, Name
from dticn.packets.ndn import Data, Interest

MAX_PREFIX_CANDIDATES = 256
"""Stored names a CanBePrefix lookup examines before it gives up (counted in
``prefix_scans_cut``): names under a prefix that are all stale for a MustBeFresh
Interest would otherwise cost a scan of all of them for every such Interest."""


@dataclass(slots=True)
class CsEntry:
    """A cached Data, when it turns stale, whether it is pinned, and the face charged."""

    data: Data
    stale_at: float
    pinned: bool = False
    face_id: int | None = None


class _Node:
    """One name-tree node: children by component, kept in sorted order too."""

    __slots__ = ("children", "order", "stored")

    def __init__(self) -> None:
        self.children: dict[bytes, _Node] = {}
        self.order: list[bytes] = []
        """``children``'s keys, sorted (insort: a C memmove per new child)."""
        self.stored = False


class _NameTree:
    """Stored names as a tree of components, for "the first stored names under this
    prefix, in name order". Nodes without a stored name below them are pruned, so a walk
    from a prefix meets a stored name at most ``len(name)`` nodes after the last one."""

    __slots__ = ("_root",)

    def __init__(self) -> None:
        self._root = _Node()

    def add(self, name: Name) -> None:
        node = self._root
        for comp in name:
            child = node.children.get(comp)
            if child is None:
                child = node.children[comp] = _Node()
                bisect.insort(node.order, comp)
            node = child
        node.stored = True

    def remove(self, name: Name) -> None:
        path: list[tuple[_Node, bytes]] = []
        node = self._root
        for comp in name:
            child = node.children.get(comp)
            if child is None:
                return
            path.append((node, comp))
            node = child
        node.stored = False
        while path and not node.stored and not node.children:
            parent, comp = path.pop()
            del parent.children[comp]
            del parent.order[bisect.bisect_left(parent.order, comp)]
            node = parent

    def under(self, prefix: Name) -> Iterator[Name]:
        """Stored names starting with ``prefix``, in tuple (component byte) order."""
        node: _Node | None = self._root
        for comp in prefix:
            node = node.children.get(comp)  # type: ignore[union-attr]
            if node is None:
                return
        assert node is not None
        if node.stored:
            yield prefix
        stack = [(prefix, node, iter(node.order))]
        while stack:
            name, parent, rest = stack[-1]
            nxt = next(rest, None)
            if nxt is None:
                stack.pop()
                continue
            child = parent.children[nxt]
            child_name = (*name, nxt)
            if child.stored:
                yield child_name
            if child.order:
                stack.append((child_name, child, iter(child.order)))


class ContentStore:
    """insert/find/erase on Data by name; bounded (``capacity`` + ``pinned_capacity``).

    Args:
        capacity: LRU entries (0 disables caching of unpinned Data).
        pinned_capacity: pinned entries.
        face_quota: most LRU entries charged to one face (None: no per-face bound).
        evictions: where evictions are counted by reason (the forwarder passes its
            counters' ``cs_evictions``).
    """

    def __init__(
        self, capacity: int = 10_000, pinned_capacity: int = 1_000,
        face_quota: int | None = None, evictions: Counter[str] | None = None,
    ) -> None:
        if capacity < 0 or pinned_capacity < 0:
            raise ValueError("CS capacities must be >= 0 (0 disables caching)")
        if face_quota is not None and face_quota < 1:
            raise ValueError(f"CS face quota must be >= 1 entry (or None), got {face_quota}")
        self.capacity = capacity
        self.pinned_capacity = pinned_capacity
        self.face_quota = face_quota
        self.evictions: Counter[str] = Counter() if evictions is None else evictions
        self._lru: OrderedDict[Name, CsEntry] = OrderedDict()
        self._pinned: dict[Name, CsEntry] = {}
        self._by_face: dict[int, OrderedDict[Name, None]] = {}
        """LRU names charged to each face, least recently used first (an OrderedDict:
        taking the oldest of a plain dict walks the slots its earlier deletions left)."""
        self._tree: _NameTree | None = None
        self.hits = 0
        self.misses = 0
        self.prefix_scans_cut = 0
        """CanBePrefix lookups answered "miss" after ``MAX_PREFIX_CANDIDATES`` stale names."""

    def __len__(self) -> int:
        return len(self._lru) + len(self._pinned)

    def face_entries(self, face_id: int) -> int:
        """LRU entries charged to ``face_id``."""
        return len(self._by_face.get(face_id, ()))

    def insert(
        self, data: Data, now: float, *, pinned: bool = False, face_id: int | None = None
    ) -> bool:
        """Cache ``data`` (charged to ``face_id``, the face it came from); return False
        when it cannot be stored (pinned area full, or caching disabled)."""
        fresh = (data.freshness_ms or 0) / 1000.0
        name = data.name
        lru = self._lru
        if pinned:
            if name not in self._pinned and len(self._pinned) >= self.pinned_capacity:
                return False
            old = lru.pop(name, None)
            if old is not None:
                self._uncharge(old)
            elif self._tree is not None and name not in self._pinned:
                self._tree.add(name)
            self._pinned[name] = CsEntry(data, now + fresh, True)
            return True
        if self.capacity == 0:
            return False
        if name in self._pinned:
            self._pinned[name] = CsEntry(data, now + fresh, True)
            return True
        old = lru.pop(name, None)
        if old is not None:
            self._uncharge(old)
        elif self._tree is not None:
            self._tree.add(name)
        lru[name] = CsEntry(data, now + fresh, False, face_id)
        if face_id is not None:
            mine = self._by_face.get(face_id)
            if mine is None:
                mine = self._by_face[face_id] = OrderedDict()
            mine[name] = None
            quota = self.face_quota
            if quota is not None and len(mine) > quota:
                self._evict(next(iter(mine)), "face_quota")
        while len(lru) > self.capacity:
            self._evict(next(iter(lru)), "capacity")
        return True

    def _evict(self, name: Name, reason: str) -> None:
        entry = self._lru.pop(name)
        self._uncharge(entry)
        if self._tree is not None:
            self._tree.remove(name)
        self.evictions[reason] += 1

    def _uncharge(self, entry: CsEntry) -> None:
        if entry.face_id is None:
            return
        mine = self._by_face.get(entry.face_id)
        if mine is not None:
            mine.pop(entry.data.name, None)
            if not mine:
                del self._by_face[entry.face_id]

    def find(self, interest: Interest, now: float) -> Data | None:
        """The Data that satisfies ``interest`` (freshness honoured), or None."""
        entry = self._match(interest, now)
        if entry is None:
            self.misses += 1
            return None
        self.hits += 1
        if not entry.pinned:
            name = entry.data.name
            self._lru.move_to_end(name)
            if entry.face_id is not None:
                self._by_face[entry.face_id].move_to_end(name)
        return entry.data

    def _match(self, interest: Interest, now: float) -> CsEntry | None:
        name = interest.name
        if name and name[-1][0] == TYPE_IMPLICIT_SHA256:
            entry = self._lru.get(name[:-1]) or self._pinned.get(name[:-1])
            if entry is None or implicit_digest(entry.data) != name[-1]:
                return None
            if interest.must_be_fresh and entry.stale_at <= now:
                return None
            return entry
        if not interest.can_be_prefix:
            entry = self._lru.get(name) or self._pinned.get(name)
            if entry is None or (interest.must_be_fresh and entry.stale_at <= now):
                return None
            return entry
        if self._tree is None:
            self._tree = _NameTree()
            for stored in (*self._lru, *self._pinned):
                self._tree.add(stored)
        for tried, cand in enumerate(self._tree.under(name)):
            if tried == MAX_PREFIX_CANDIDATES:
                self.prefix_scans_cut += 1
                return None    # a miss is always a valid answer: the Interest goes upstream
            entry = self._lru.get(cand) or self._pinned.get(cand)
            if entry is not None and not (interest.must_be_fresh and entry.stale_at <= now):
                return entry
        return None

    def erase(self, name: Name) -> bool:
        """Remove the Data of exactly ``name`` (pinned or not)."""
        found = self._lru.pop(name, None) or self._pinned.pop(name, None)
        if found is None:
            return False
        self._uncharge(found)
        if self._tree is not None:
            self._tree.remove(name)
        return True

    def unpin(self, name: Name) -> None:
        """Move a pinned entry into the LRU part (evictable again; charged to no face)."""
        entry = self._pinned.pop(name, None)
        if entry is not None:
            if self._tree is not None:
                self._tree.remove(name)
            self.insert(entry.data, entry.stale_at - (entry.data.freshness_ms or 0) / 1000.0)
