"""Forwarder counters; every drop has a named reason."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass(slots=True)
class ForwarderCounters:
    """NFD-like global counters plus ``drops[reason]``."""

    in_interests: int = 0
    out_interests: int = 0
    in_data: int = 0
    out_data: int = 0
    in_nacks: int = 0
    out_nacks: int = 0
    satisfied_interests: int = 0
    unsatisfied_interests: int = 0
    cs_hits: int = 0
    cs_misses: int = 0
    retransmissions: int = 0
    aggregated: int = 0
    lifetimes_capped: int = 0
    drops: Counter[str] = field(default_factory=Counter)
    cs_evictions: Counter[str] = field(default_factory=Counter)
    """Content Store evictions by reason (``capacity``, ``face_quota``)."""

    def drop(self, reason: str) -> None:
        """Count one dropped packet for ``reason``."""
        self.drops[reason] += 1

    def as_dict(self) -> dict[str, object]:
        """Plain dict for logs and JSON: the packet counters and drops (the shape the
        pinned edge results store, so later counters such as ``lifetimes_capped`` are
        only in :meth:`status`)."""
        out: dict[str, object] = {
            k: getattr(self, k) for k in self.__dataclass_fields__
            if k not in ("drops", "cs_evictions") and k not in _STATUS_ONLY
        }
        out["drops"] = dict(self.drops)
        return out

    def status(self) -> dict[str, object]:
        """Every counter (what the running forwarder reports)."""
        out = self.as_dict()
        out.update({k: getattr(self, k) for k in _STATUS_ONLY})
        out["cs_evictions"] = dict(self.cs_evictions)
        return out


_STATUS_ONLY = ("lifetimes_capped",)
