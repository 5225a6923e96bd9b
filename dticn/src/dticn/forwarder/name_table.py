"""A name-keyed table with longest-prefix match, shared by FIB, strategy choice and
retransmission policies.

A dict keyed by whole prefixes plus the set of prefix lengths in use: a lookup probes
only the lengths that exist, longest first, so it costs O(number of distinct lengths)
dict probes, which is small for real routing tables.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Generic, TypeVar

from dticn.packets.name import Name

V = TypeVar("V")


class NameTable(Generic[V]):
    """Exact insert/find/erase by prefix, plus longest-prefix match."""

    def __init__(self) -> None:
        self._entries: dict[Name, V] = {}
        self._lengths: Counter[int] = Counter()
        self._sorted_lengths: list[int] = []
        self.size = 0
        """Entries (what ``len`` says; the forwarder's hot paths read the attribute, a
        call into ``__len__`` costs more than the lookup it guards)."""

    def __len__(self) -> int:
        return self.size

    def __iter__(self) -> Iterator[tuple[Name, V]]:
        return iter(list(self._entries.items()))

    def insert(self, prefix: Name, value: V) -> None:
        """Set the value of ``prefix`` (replacing an existing one)."""
        if prefix not in self._entries:
            self.size += 1
            self._lengths[len(prefix)] += 1
            if self._lengths[len(prefix)] == 1:
                self._sorted_lengths = sorted(self._lengths, reverse=True)
        self._entries[prefix] = value

    def find(self, prefix: Name) -> V | None:
        """Value of exactly ``prefix``."""
        return self._entries.get(prefix)

    def erase(self, prefix: Name) -> bool:
        """Remove ``prefix``; return whether it was there."""
        if prefix not in self._entries:
            return False
        del self._entries[prefix]
        self.size -= 1
        self._lengths[len(prefix)] -= 1
        if self._lengths[len(prefix)] == 0:
            del self._lengths[len(prefix)]
            self._sorted_lengths = sorted(self._lengths, reverse=True)
        return True

    def longest_prefix_match(self, name: Name) -> tuple[Name, V] | None:
        """The longest stored prefix of ``name`` and its value."""
        n = len(name)
        entries = self._entries
        for length in self._sorted_lengths:
            if length > n:
                continue
            key = name[:length]
            value = entries.get(key)
            if value is not None:
                return key, value
        return None
