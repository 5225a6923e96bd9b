"""Per-entry Interest retransmission policy, CCN-lite style.

CCN-lite keeps, per PIT entry, a lifetime, a retransmission timer and a count: the
forwarder itself re-sends the pending Interest every ``retx_interval`` seconds, at most
``max_retx`` times, and drops the entry after ``pit_lifetime``. This is "retransmission
in the network" (INR); with ``retx_interval = 0`` only the consumer retransmits (CR).
The DT-ICN paper's V1-V3 configurations are triples of these three numbers, e.g.
forwarder ``4/1000/4`` = ``RetxPolicy(pit_lifetime=4.0, retx_interval=1.0, max_retx=4)``.

Policies are looked up by longest prefix of the Interest name, then by the out face's
``retx_policy``, then the forwarder's default.
"""

from __future__ import annotations

from dataclasses import dataclass

from dticn.forwarder.name_table import NameTable
from dticn.packets.name import Name


@dataclass(frozen=True, slots=True)
class RetxPolicy:
    """Lifetime and retransmission of PIT entries.

    Args:
        pit_lifetime: seconds a PIT entry lives; ``None`` uses the Interest's
            InterestLifetime (NDN default behaviour).
        retx_interval: seconds between forwarder retransmissions; 0 disables INR.
        max_retx: most retransmissions per entry.
        fresh_nonce: retransmit with a new nonce instead of the original packet.
            CCN-lite re-sends the same bytes, which a point-to-point next hop treats as
            a retransmission; on a MULTI_ACCESS link (LoRa broadcast) the same nonce
            from the same face looks like a loop, so gateways retransmitting into LoRa
            should set this.
    """

    pit_lifetime: float | None = None
    retx_interval: float = 0.0
    max_retx: int = 0
    fresh_nonce: bool = False

    def __post_init__(self) -> None:
        if self.pit_lifetime is not None and self.pit_lifetime <= 0:
            raise ValueError(f"pit_lifetime must be > 0 s or None, got {self.pit_lifetime}")
        if self.retx_interval < 0 or self.max_retx < 0:
            raise ValueError(
                "retx_interval and max_retx must be >= 0 "
                f"(got {self.retx_interval}, {self.max_retx}); use 0 to disable INR"
            )

    @property
    def in_network(self) -> bool:
        """True when the forwarder itself retransmits (INR)."""
        return self.retx_interval > 0 and self.max_retx > 0

    @classmethod
    def from_triple(cls, lifetime_s: float, retx_ms: float, count: int) -> RetxPolicy:
        """Build from the paper's ``lifetime s / timer ms / count`` notation."""
        return cls(pit_lifetime=lifetime_s, retx_interval=retx_ms / 1000.0, max_retx=count)


class RetxTable:
    """Prefix -> :class:`RetxPolicy`, longest prefix match."""

    def __init__(self, default: RetxPolicy | None = None) -> None:
        self.default = default or RetxPolicy()
        self._table: NameTable[RetxPolicy] = NameTable()

    def __len__(self) -> int:
        return len(self._table)

    def insert(self, prefix: Name, policy: RetxPolicy) -> None:
        """Set the policy for ``prefix`` and everything under it."""
        self._table.insert(prefix, policy)

    def erase(self, prefix: Name) -> None:
        """Remove the policy of exactly ``prefix``."""
        self._table.erase(prefix)

    def find(self, name: Name) -> RetxPolicy | None:
        """Policy of the longest matching prefix, or ``None``."""
        hit = self._table.longest_prefix_match(name)
        return hit[1] if hit else None
