"""PIT: pending Interests, with aggregation, nonce records and per-entry timers.

An entry is keyed like NFD's: (name, CanBePrefix, MustBeFresh). It keeps in-records
(downstream faces waiting, with their nonces and expiry) and out-records (upstream
faces the Interest went to), plus CCN-lite's per-entry retransmission state (timer,
count, policy), which the forwarder drives. The table is bounded: ``insert`` returns
``None`` when full so the forwarder can drop and count instead of growing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dticn.clock import TimerHandle
from dticn.forwarder.retx import RetxPolicy
from dticn.packets.name import TYPE_IMPLICIT_SHA256, Name
from dticn.packets.ndn import Data, Interest, full_name

PitKey = tuple[Name, bool, bool]


@dataclass(slots=True)
class InRecord:
    """A downstream that asked: face, its nonce, when its Interest expires."""

    face_id: int
    nonce: int
    expiry: float
    interest: Interest


@dataclass(slots=True)
class OutRecord:
    """An upstream the Interest was sent to; ``nack_reason`` set when it Nacked."""

    face_id: int
    nonce: int
    last_sent: float
    nack_reason: int | None = None


@dataclass(slots=True, eq=False)
class PitEntry:
    """One pending Interest (see module docstring)."""

    key: PitKey
    interest: Interest
    created: float
    in_records: dict[int, InRecord] = field(default_factory=dict)
    out_records: dict[int, OutRecord] = field(default_factory=dict)
    expiry: float = 0.0
    expiry_timer: TimerHandle | None = None
    retx_timer: TimerHandle | None = None
    retx_count: int = 0
    retx_policy: RetxPolicy | None = None
    retx_from_prefix: bool = False
    satisfied: bool = False
    downstream_retx: bool = False
    erased: bool = False
    tags: dict[str, object] = field(default_factory=dict)

    @property
    def name(self) -> Name:
        """The Interest name."""
        return self.key[0]

    def cancel_timers(self) -> None:
        """Stop expiry and retransmission timers."""
        if self.expiry_timer is not None:
            self.expiry_timer.cancel()
            self.expiry_timer = None
        if self.retx_timer is not None:
            self.retx_timer.cancel()
            self.retx_timer = None


class Pit:
    """The pending Interest table, bounded by ``capacity`` entries."""

    def __init__(self, capacity: int = 65_536) -> None:
        if capacity <= 0:
            raise ValueError(f"PIT capacity must be > 0, got {capacity}")
        self.capacity = capacity
        self._entries: dict[PitKey, PitEntry] = {}
        self._by_name: dict[Name, list[PitEntry]] = {}
        self._digest_entries = 0

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(list(self._entries.values()))

    def find(self, interest: Interest) -> PitEntry | None:
        """The entry matching the Interest's (name, CanBePrefix, MustBeFresh)."""
        return self._entries.get((interest.name, interest.can_be_prefix, interest.must_be_fresh))

    def insert(self, interest: Interest, now: float) -> tuple[PitEntry | None, bool]:
        """Find or create the entry; ``(None, False)`` when the table is full."""
        key = (interest.name, interest.can_be_prefix, interest.must_be_fresh)
        entry = self._entries.get(key)
        if entry is not None:
            return entry, False
        if len(self._entries) >= self.capacity:
            return None, False
        entry = PitEntry(key, interest, now)
        self._entries[key] = entry
        self._by_name.setdefault(interest.name, []).append(entry)
        if _ends_with_digest(interest.name):
            self._digest_entries += 1
        return entry, True

    def find_all_data_matches(self, data: Data) -> list[PitEntry]:
        """Entries a Data satisfies: exact name, a prefix with CanBePrefix, or the full
        name with implicit digest (computed only while such entries exist)."""
        out: list[PitEntry] = []
        name = data.name
        by_name = self._by_name
        n = len(name)
        for length in range(n, 0, -1):
            bucket = by_name.get(name if length == n else name[:length])
            if bucket:
                for entry in bucket:
                    if length == n or entry.key[1]:
                        out.append(entry)
        if self._digest_entries:
            bucket = by_name.get(full_name(data))
            if bucket:
                out.extend(bucket)
        return out

    def erase(self, entry: PitEntry) -> None:
        """Remove the entry and stop its timers."""
        entry.cancel_timers()
        if entry.erased:
            return
        entry.erased = True
        self._entries.pop(entry.key, None)
        if _ends_with_digest(entry.key[0]):
            self._digest_entries -= 1
        bucket = self._by_name.get(entry.key[0])
        if bucket is not None:
            bucket.remove(entry)
            if not bucket:
                del self._by_name[entry.key[0]]


def _ends_with_digest(name: Name) -> bool:
    return bool(name) and name[-1][0] == TYPE_IMPLICIT_SHA256
