"""Forwarding strategies: triggers the forwarder calls, actions they call back.

Triggers (NFD names): :meth:`Strategy.after_receive_interest`,
:meth:`Strategy.after_receive_nack`, :meth:`Strategy.before_satisfy_interest`,
:meth:`Strategy.after_retransmission_timer`. Actions are forwarder methods:
``send_interest(entry, face, interest)``, ``send_nack(entry, face_id, reason)``,
``reject_pending_interest(entry)``. Tests record actions with a fake forwarder or
recording faces and move the EventKernel.

Strategies are found by name in a :class:`StrategyRegistry` (not an if/elif) and
chosen per prefix by longest match in the forwarder's strategy-choice table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from dticn.packets.lp import NackReason
from dticn.packets.ndn import Interest

if TYPE_CHECKING:
    from dticn.forwarder.face import Face
    from dticn.forwarder.forwarder import Forwarder
    from dticn.forwarder.pit import PitEntry


class Strategy:
    """Base strategy: subclasses override the triggers they need."""

    name: ClassVar[str] = "base"

    def __init__(self, forwarder: Forwarder) -> None:
        self.forwarder = forwarder

    def reject_no_route(self, in_face: Face, entry: PitEntry) -> None:
        """No eligible next hop: count the drop, Nack NoRoute downstream, end the entry."""
        fw = self.forwarder
        fw.counters.drop("no_route")
        fw.send_nack(entry, in_face.face_id, NackReason.NO_ROUTE)
        fw.reject_pending_interest(entry)

    def eligible_nexthops(self, in_face: Face, entry: PitEntry) -> list[Face]:
        """Next-hop faces from the FIB, cheapest first, minus the in face and faces
        that would break ``/localhost`` scope."""
        fw = self.forwarder
        fib_entry = fw.fib.find_longest_prefix_match(entry.name)
        if fib_entry is None:
            return []
        out = []
        for hop in fib_entry.nexthops:
            face = fw.faces.get(hop.face_id)
            if face is None or face is in_face or not fw.scope_allows(face, entry.name):
                continue
            out.append(face)
        return out

    def after_receive_interest(self, in_face: Face, interest: Interest, entry: PitEntry) -> None:
        """A new or retransmitted Interest missed the CS."""
        raise NotImplementedError

    def after_receive_nack(self, in_face: Face, reason: int, entry: PitEntry) -> None:
        """An upstream Nacked; default: once every upstream Nacked, Nack downstream with
        the least severe reason and drop the entry."""
        reasons = [r.nack_reason for r in entry.out_records.values()]
        if any(r is None for r in reasons):
            return
        worst_ok = min((r for r in reasons if r is not None), default=reason)
        fw = self.forwarder
        for face_id in list(entry.in_records):
            fw.send_nack(entry, face_id, worst_ok)
        fw.reject_pending_interest(entry)

    def before_satisfy_interest(self, entry: PitEntry, in_face: Face, data: object) -> None:
        """Data is about to satisfy ``entry`` (measurements would go here)."""

    def after_retransmission_timer(self, entry: PitEntry) -> None:
        """The entry's CCN-lite retransmission timer fired: re-send the pending Interest
        to every upstream it already went to (same wire and nonce, unless the policy
        asks for a fresh nonce)."""
        fw = self.forwarder
        interest = entry.interest
        if entry.retx_policy is not None and entry.retx_policy.fresh_nonce:
            interest = fw.renonce(interest)
        for face_id in list(entry.out_records):
            face = fw.faces.get(face_id)
            if face is not None:
                fw.send_interest(entry, face, interest, retransmission=True)


class BestRouteStrategy(Strategy):
    """Send to the cheapest eligible next hop. A retransmission from a downstream
    already recorded goes to the next unused hop if any, else again to the cheapest; a
    new downstream joining a pending entry is aggregated (not forwarded). No route:
    Nack NoRoute."""

    name = "best-route"

    def after_receive_interest(self, in_face: Face, interest: Interest, entry: PitEntry) -> None:
        fw = self.forwarder
        hops = self.eligible_nexthops(in_face, entry)
        if not hops:
            self.reject_no_route(in_face, entry)
            return
        if not entry.out_records:
            fw.send_interest(entry, hops[0], interest)
            return
        if not entry.downstream_retx or not fw.config.forward_retransmissions:
            fw.counters.aggregated += 1
            return
        unused = [f for f in hops if f.face_id not in entry.out_records]
        fw.send_interest(entry, unused[0] if unused else hops[0], interest)

    def after_receive_nack(self, in_face: Face, reason: int, entry: PitEntry) -> None:
        """Try the next untried next hop (as NFD's best-route does); Nack downstream
        only when every next hop has Nacked."""
        fw = self.forwarder
        if entry.in_records:
            downstream = fw.faces.get(next(iter(entry.in_records)))
            if downstream is not None:
                untried = [
                    f for f in self.eligible_nexthops(downstream, entry)
                    if f.face_id not in entry.out_records and f.face_id not in entry.in_records
                ]
                if untried:
                    fw.send_interest(entry, untried[0], entry.interest)
                    return
        super().after_receive_nack(in_face, reason, entry)


class MulticastStrategy(Strategy):
    """Send to every eligible next hop."""

    name = "multicast"

    def after_receive_interest(self, in_face: Face, interest: Interest, entry: PitEntry) -> None:
        fw = self.forwarder
        hops = self.eligible_nexthops(in_face, entry)
        if not hops:
            self.reject_no_route(in_face, entry)
            return
        for face in hops:
            fw.send_interest(entry, face, interest)


StrategyFactory = Callable[["Forwarder"], Strategy]


class StrategyRegistry:
    """Name -> strategy factory; each forwarder owns one (no module-level state)."""

    def __init__(self) -> None:
        self._factories: dict[str, StrategyFactory] = {}

    def register(self, name: str, factory: StrategyFactory) -> None:
        """Make ``name`` available for strategy choice."""
        self._factories[name] = factory

    def create(self, name: str, forwarder: Forwarder) -> Strategy:
        """Instantiate the strategy called ``name``."""
        try:
            factory = self._factories[name]
        except KeyError:
            raise KeyError(
                f"unknown strategy {name!r}; registered: {sorted(self._factories)}. "
                "Register it with StrategyRegistry.register first"
            ) from None
        return factory(forwarder)

    def names(self) -> list[str]:
        """Registered strategy names."""
        return sorted(self._factories)


def default_strategy_registry() -> StrategyRegistry:
    """A registry with the built-in strategies."""
    reg = StrategyRegistry()
    reg.register(BestRouteStrategy.name, BestRouteStrategy)
    reg.register(MulticastStrategy.name, MulticastStrategy)
    return reg
