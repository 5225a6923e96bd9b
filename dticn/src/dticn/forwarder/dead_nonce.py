"""Dead Nonce List: (name, nonce) pairs of recently finished PIT entries.

A looping Interest can come back after its PIT entry is gone; NFD remembers
finished nonces for a while to catch it. Bounded in size (oldest first out) and age.
"""

from __future__ import annotations

from collections import OrderedDict

from dticn.packets.name import Name


class DeadNonceList:
    """insert/find with expiry; time is passed in by the forwarder (no own clock)."""

    def __init__(self, lifetime: float = 6.0, capacity: int = 65_536) -> None:
        self.lifetime = lifetime
        self.capacity = capacity
        self._entries: OrderedDict[tuple[Name, int], float] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def insert(self, name: Name, nonce: int, now: float) -> None:
        """Remember ``(name, nonce)`` until ``now + lifetime``."""
        key = (name, nonce)
        self._entries.pop(key, None)
        self._entries[key] = now + self.lifetime
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)

    def find(self, name: Name, nonce: int, now: float) -> bool:
        """True if the pair is remembered and not expired."""
        if not self._entries:
            return False
        self._evict(now)
        expiry = self._entries.get((name, nonce))
        return expiry is not None and expiry > now

    def _evict(self, now: float) -> None:
        entries = self._entries
        while entries:
            key, expiry = next(iter(entries.items()))
            if expiry > now:
                break
            del entries[key]
