"""FIB: name prefix -> next hops (face, cost), longest prefix match.

Prefixes are also indexed by next-hop face, so a face's route count (its registration
quota) is one ``len`` and removing a face visits only its own routes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dticn.forwarder.name_table import NameTable
from dticn.packets.name import Name


@dataclass(slots=True)
class NextHop:
    """One route: out face and its cost (lower is preferred)."""

    face_id: int
    cost: int = 0


@dataclass(slots=True)
class FibEntry:
    """A FIB prefix and its next hops, kept sorted by cost."""

    prefix: Name
    nexthops: list[NextHop] = field(default_factory=list)


class Fib:
    """The forwarding information base."""

    def __init__(self, max_entries: int = 100_000) -> None:
        self.max_entries = max_entries
        self._table: NameTable[FibEntry] = NameTable()
        self._by_face: dict[int, dict[Name, None]] = {}

    def __len__(self) -> int:
        return len(self._table)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return (entry for _, entry in self._table)

    def insert(self, prefix: Name, face_id: int, cost: int = 0) -> FibEntry:
        """Add (or update the cost of) the next hop ``face_id`` for ``prefix``."""
        entry = self._table.find(prefix)
        if entry is None:
            if len(self._table) >= self.max_entries:
                raise OverflowError(
                    f"FIB holds {self.max_entries} prefixes; raise max_entries or aggregate "
                    "routes"
                )
            entry = FibEntry(prefix)
            self._table.insert(prefix, entry)
        for hop in entry.nexthops:
            if hop.face_id == face_id:
                hop.cost = cost
                break
        else:
            entry.nexthops.append(NextHop(face_id, cost))
            self._by_face.setdefault(face_id, {})[prefix] = None
        entry.nexthops.sort(key=lambda h: h.cost)
        return entry

    def route_count(self, face_id: int) -> int:
        """Prefixes with a next hop through ``face_id``."""
        return len(self._by_face.get(face_id, ()))

    def find_exact(self, prefix: Name) -> FibEntry | None:
        """The entry of exactly ``prefix``."""
        return self._table.find(prefix)

    def find_longest_prefix_match(self, name: Name) -> FibEntry | None:
        """The entry with the longest prefix of ``name`` (next hops non-empty)."""
        hit = self._table.longest_prefix_match(name)
        return hit[1] if hit else None

    def erase(self, prefix: Name, face_id: int | None = None) -> bool:
        """Remove one next hop (or, with ``face_id=None``, the whole prefix)."""
        entry = self._table.find(prefix)
        if entry is None:
            return False
        if face_id is not None:
            before = len(entry.nexthops)
            entry.nexthops = [h for h in entry.nexthops if h.face_id != face_id]
            if len(entry.nexthops) == before:
                return False
            self._unindex(face_id, prefix)
            if entry.nexthops:
                return True
        else:
            for hop in entry.nexthops:
                self._unindex(hop.face_id, prefix)
        self._table.erase(prefix)
        return True

    def _unindex(self, face_id: int, prefix: Name) -> None:
        prefixes = self._by_face.get(face_id)
        if prefixes is not None:
            prefixes.pop(prefix, None)
            if not prefixes:
                del self._by_face[face_id]

    def remove_face(self, face_id: int) -> None:
        """Drop every next hop through ``face_id`` (the face closed); costs time in
        proportion to that face's own routes."""
        for prefix in list(self._by_face.get(face_id, ())):
            self.erase(prefix, face_id)
