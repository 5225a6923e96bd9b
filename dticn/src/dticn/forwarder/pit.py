"""PIT: pending Interests, with aggregation, nonce records and per-entry timers.

An entry is keyed like NFD's: (name, CanBePrefix, MustBeFresh). It keeps in-records
(downstream faces waiting, with their nonces and expiry) and out-records (upstream
faces the Interest went to), plus CCN-lite's per-entry retransmission state (timer,
count, policy), which the forwarder drives. The table is bounded: ``insert`` returns
``None`` when full so the forwarder can drop and count instead of growing.

In- and out-records are indexed by face (the forwarder adds and removes them through
:meth:`Pit.add_in_record` and friends, never by writing ``entry.in_records`` itself), so
a face's PIT quota is one ``len`` and removing a face visits only that face's entries,
not the whole table.

Data matching probes the Data name's exact length plus only the prefix lengths that
CanBePrefix entries use: a long name (thousands of components) costs time linear in its
length, not one slice and hash per prefix length (which is quadratic).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from dticn.clock import TimerHandle
from dticn.forwarder.retx import RetxPolicy
from dticn.packets.matching import full_name
from dticn.packets.name import TYPE_IMPLICIT_SHA256, Name
from dticn.packets.ndn import Data, Interest

PitKey = tuple[Name, bool, bool]
"""What an entry is keyed by, as in NFD: (name, CanBePrefix, MustBeFresh); two Interests
with the same three share an entry. Only :func:`pit_key` builds one; code reads the three
from the entry's named fields (:class:`PitEntry`), never by position."""


def pit_key(interest: Interest) -> PitKey:
    """The PIT key of ``interest``."""
    return (interest.name, interest.can_be_prefix, interest.must_be_fresh)


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
    """One pending Interest (see module docstring); ``name``, ``can_be_prefix`` and
    ``must_be_fresh`` are its key's three fields (:attr:`key`)."""

    name: Name
    can_be_prefix: bool
    must_be_fresh: bool
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
    def key(self) -> PitKey:
        """The entry's key in the table."""
        return (self.name, self.can_be_prefix, self.must_be_fresh)

    @property
    def retx_armed(self) -> bool:
        """A retransmission timer is pending. (A property, so that a caller that cleared
        ``retx_timer`` and then let the strategy run reads it afresh: mypyc trusts the
        narrowing of an attribute to None across calls; docs/dticn-core.md "Performance".)"""
        return self.retx_timer is not None

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
        self._prefix_lengths: Counter[int] = Counter()
        """Name lengths of CanBePrefix entries (how many of each)."""
        self._sorted_prefix_lengths: list[int] = []
        self._in_by_face: dict[int, dict[PitEntry, None]] = {}
        self._out_by_face: dict[int, dict[PitEntry, None]] = {}
        self._peak = 0
        """Most entries since the tables were last compacted."""

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(list(self._entries.values()))

    def find(self, interest: Interest) -> PitEntry | None:
        """The entry matching the Interest's (name, CanBePrefix, MustBeFresh)."""
        return self._entries.get(pit_key(interest))

    def insert(self, interest: Interest, now: float) -> tuple[PitEntry | None, bool]:
        """Find or create the entry; ``(None, False)`` when the table is full."""
        key = pit_key(interest)
        entry = self._entries.get(key)
        if entry is not None:
            return entry, False
        if len(self._entries) >= self.capacity:
            return None, False
        entry = PitEntry(interest.name, interest.can_be_prefix, interest.must_be_fresh,
                         interest, now)
        self._entries[key] = entry
        if len(self._entries) > self._peak:
            self._peak = len(self._entries)
        name = interest.name
        bucket = self._by_name.get(name)
        if bucket is None:
            self._by_name[name] = [entry]
        else:
            bucket.append(entry)
        if name and name[-1][0] == TYPE_IMPLICIT_SHA256:
            self._digest_entries += 1
        if interest.can_be_prefix:
            self._count_prefix_length(len(interest.name), +1)
        return entry, True

    def _count_prefix_length(self, length: int, delta: int) -> None:
        lengths = self._prefix_lengths
        lengths[length] += delta
        if lengths[length] <= 0:
            del lengths[length]
            self._sorted_prefix_lengths = sorted(lengths, reverse=True)
        elif delta > 0 and lengths[length] == 1:
            self._sorted_prefix_lengths = sorted(lengths, reverse=True)

    # ------------------------------------------------------ records by face
    def add_in_record(self, entry: PitEntry, record: InRecord) -> None:
        """Set the downstream record of ``record.face_id`` (replacing its previous one)."""
        entry.in_records[record.face_id] = record
        if not entry.erased:
            _index(self._in_by_face, record.face_id, entry)

    def remove_in_record(self, entry: PitEntry, face_id: int) -> InRecord | None:
        """Drop the downstream record of ``face_id``; return it (None if absent)."""
        record = entry.in_records.pop(face_id, None)
        if record is not None:
            _unindex(self._in_by_face, face_id, entry)
        return record

    def add_out_record(self, entry: PitEntry, record: OutRecord) -> None:
        """Set the upstream record of ``record.face_id``."""
        entry.out_records[record.face_id] = record
        if not entry.erased:
            _index(self._out_by_face, record.face_id, entry)

    def remove_out_record(self, entry: PitEntry, face_id: int) -> OutRecord | None:
        """Drop the upstream record of ``face_id``; return it (None if absent)."""
        record = entry.out_records.pop(face_id, None)
        if record is not None:
            _unindex(self._out_by_face, face_id, entry)
        return record

    def in_record_count(self, face_id: int) -> int:
        """Entries ``face_id`` is waiting on (what its PIT quota counts)."""
        return len(self._in_by_face.get(face_id, ()))

    def entries_of_face(self, face_id: int) -> list[PitEntry]:
        """Entries with an in- or out-record of ``face_id`` (each once, oldest first)."""
        seen = dict(self._in_by_face.get(face_id, {}))
        seen.update(self._out_by_face.get(face_id, {}))
        return list(seen)

    def find_all_data_matches(self, data: Data) -> list[PitEntry]:
        """Entries a Data satisfies: exact name, a prefix with CanBePrefix, or the full
        name with implicit digest (computed only while such entries exist)."""
        out: list[PitEntry] = []
        name = data.name
        by_name = self._by_name
        n = len(name)
        bucket = by_name.get(name)
        if bucket:
            out.extend(bucket)
        for length in self._sorted_prefix_lengths:
            if length >= n:
                continue
            bucket = by_name.get(name[:length])
            if bucket:
                for entry in bucket:
                    if entry.can_be_prefix:
                        out.append(entry)
        if self._digest_entries:
            bucket = by_name.get(full_name(data))
            if bucket:
                out.extend(bucket)
        return out

    def erase(self, entry: PitEntry) -> None:
        """Remove the entry and stop its timers."""
        if entry.expiry_timer is not None or entry.retx_timer is not None:
            entry.cancel_timers()
        if entry.erased:
            return
        entry.erased = True
        self._entries.pop(entry.key, None)
        if _ends_with_digest(entry.name):
            self._digest_entries -= 1
        if entry.can_be_prefix:
            self._count_prefix_length(len(entry.name), -1)
        for face_id in entry.in_records:
            _unindex(self._in_by_face, face_id, entry)
        for face_id in entry.out_records:
            _unindex(self._out_by_face, face_id, entry)
        bucket = self._by_name.get(entry.name)
        if bucket is not None:
            bucket.remove(entry)
            if not bucket:
                del self._by_name[entry.name]
        if self._peak > _COMPACT_MIN and len(self._entries) < self._peak // 4:
            self._compact()

    def _compact(self) -> None:
        """Rebuild the dicts after a flood left: a Python dict never shrinks on delete,
        so the tables would keep the flood's size. Costs the entries left, which is at
        most a third of those erased since the last compaction (amortised O(1))."""
        self._entries = dict(self._entries)
        self._by_name = dict(self._by_name)
        self._peak = len(self._entries)


_COMPACT_MIN = 4096
"""Tables smaller than this are never compacted (not worth the copy)."""


def _index(index: dict[int, dict[PitEntry, None]], face_id: int, entry: PitEntry) -> None:
    entries = index.get(face_id)
    if entries is None:
        index[face_id] = {entry: None}
    else:
        entries[entry] = None


def _unindex(index: dict[int, dict[PitEntry, None]], face_id: int, entry: PitEntry) -> None:
    entries = index.get(face_id)
    if entries is not None:
        entries.pop(entry, None)
        if not entries:
            del index[face_id]


def _ends_with_digest(name: Name) -> bool:
    return bool(name) and name[-1][0] == TYPE_IMPLICIT_SHA256
