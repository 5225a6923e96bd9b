"""Content Store: bounded LRU cache of Data, plus pinned entries, with freshness.

Pinned entries (a gateway keeping pushed or prefetched Data for a consumer that comes
back after a wait hint) are never evicted by LRU; they have their own bound. Lookups
with CanBePrefix use a sorted list of names: names sharing a prefix are contiguous in
tuple order, so a bisect finds the first candidate.
"""

from __future__ import annotations

import bisect
from collections import OrderedDict
from dataclasses import dataclass

from dticn.packets.name import TYPE_IMPLICIT_SHA256, Name
from dticn.packets.ndn import Data, Interest, implicit_digest


@dataclass(slots=True)
class CsEntry:
    """A cached Data, when it turns stale, and whether it is pinned."""

    data: Data
    stale_at: float
    pinned: bool = False


class ContentStore:
    """insert/find/erase on Data by name; bounded (``capacity`` + ``pinned_capacity``)."""

    def __init__(self, capacity: int = 10_000, pinned_capacity: int = 1_000) -> None:
        if capacity < 0 or pinned_capacity < 0:
            raise ValueError("CS capacities must be >= 0 (0 disables caching)")
        self.capacity = capacity
        self.pinned_capacity = pinned_capacity
        self._lru: OrderedDict[Name, CsEntry] = OrderedDict()
        self._pinned: dict[Name, CsEntry] = {}
        self._names: list[Name] = []
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._lru) + len(self._pinned)

    def insert(self, data: Data, now: float, *, pinned: bool = False) -> bool:
        """Cache ``data``; return False when it cannot be stored (pinned area full)."""
        fresh = (data.freshness_ms or 0) / 1000.0
        entry = CsEntry(data, now + fresh, pinned)
        name = data.name
        existed = name in self._lru or name in self._pinned
        if pinned:
            if name not in self._pinned and len(self._pinned) >= self.pinned_capacity:
                return False
            self._lru.pop(name, None)
            self._pinned[name] = entry
        else:
            if self.capacity == 0:
                return False
            if name in self._pinned:
                self._pinned[name] = CsEntry(data, entry.stale_at, True)
                return True
            self._lru[name] = entry
            self._lru.move_to_end(name)
            while len(self._lru) > self.capacity:
                old, _ = self._lru.popitem(last=False)
                self._remove_name(old)
        if not existed:
            bisect.insort(self._names, name)
        return True

    def find(self, interest: Interest, now: float) -> Data | None:
        """The Data that satisfies ``interest`` (freshness honoured), or None."""
        entry = self._match(interest, now)
        if entry is None:
            self.misses += 1
            return None
        self.hits += 1
        if not entry.pinned:
            self._lru.move_to_end(entry.data.name)
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
        names = self._names
        n = len(name)
        i = bisect.bisect_left(names, name)
        while i < len(names) and names[i][:n] == name:
            cand = names[i]
            entry = self._lru.get(cand) or self._pinned.get(cand)
            if entry is not None and not (interest.must_be_fresh and entry.stale_at <= now):
                return entry
            i += 1
        return None

    def erase(self, name: Name) -> bool:
        """Remove the Data of exactly ``name`` (pinned or not)."""
        found = self._lru.pop(name, None) or self._pinned.pop(name, None)
        if found is None:
            return False
        self._remove_name(name)
        return True

    def unpin(self, name: Name) -> None:
        """Move a pinned entry into the LRU part (evictable again)."""
        entry = self._pinned.pop(name, None)
        if entry is not None:
            self._remove_name(name)
            self.insert(entry.data, entry.stale_at - (entry.data.freshness_ms or 0) / 1000.0)

    def _remove_name(self, name: Name) -> None:
        i = bisect.bisect_left(self._names, name)
        if i < len(self._names) and self._names[i] == name:
            del self._names[i]
