"""Per-hop reflexive forwarding state, for every forwarder between gateway and consumer.

Two variants:

* :class:`FibReflexiveHop` (the artifact): an ``/RNP/<gw>/...`` Interest installs a
  temporary FIB route ``/RPT/<gw>`` toward the face it arrived on; the route is removed when
  the last ``/RNP`` Interest that refreshed it would have expired.
* :class:`PitReflexiveHop` (draft-irtf-icnrg-reflexive-forwarding): the first Interest
  carries a random Reflexive Name Prefix (RNP) in its ApplicationParameters; the hop tags
  that Interest's PIT entry with it. A reflexive Interest (name under the RNP) is sent to
  the face the tagged entry's Interest came from. No FIB change: the state lives and dies
  with the first Interest's PIT entry (satisfied by the consumer's final ACK, or expired).
"""

from __future__ import annotations

from dticn.clock import TimerHandle
from dticn.forwarder.face import Face
from dticn.forwarder.forwarder import Forwarder
from dticn.forwarder.hooks import ForwarderHooks
from dticn.forwarder.pit import PitEntry
from dticn.packets import Interest
from dticn.packets.name import Name
from dticn.schemes.signalling import RFX_PREFIX, RNP_PREFIX, RPT_PREFIX, read_reflexive_prefix

RNP_TAG = "reflexive_name_prefix"


class FibReflexiveHop(ForwarderHooks):
    """The artifact's temporary ``/RPT/<gw>`` FIB routes (see module docstring)."""

    def __init__(self) -> None:
        self.routes: dict[tuple[Name, int], tuple[float, TimerHandle]] = {}

    def configure(self, fw: Forwarder) -> None:
        """Ask ``fw`` to show this hook every ``/RNP`` Interest."""
        fw.add_reflexive_prefix(RNP_PREFIX)

    def on_reflexive_interest(self, fw: Forwarder, in_face: Face, interest: Interest) -> bool:
        if interest.name[:1] != RNP_PREFIX or len(interest.name) < 2:
            return False
        prefix = RPT_PREFIX + interest.name[1:2]
        key = (prefix, in_face.face_id)
        until = fw.clock.now() + interest.lifetime
        old = self.routes.get(key)
        if old is not None:
            if old[0] >= until:
                return False
            old[1].cancel()
        fw.add_route(prefix, in_face.face_id)
        timer = fw.clock.call_later(interest.lifetime, self._expire, fw, key)
        self.routes[key] = (until, timer)
        return False                     # the /RNP Interest itself is forwarded normally

    def _expire(self, fw: Forwarder, key: tuple[Name, int]) -> None:
        self.routes.pop(key, None)
        fw.fib.erase(key[0], key[1])

    def temporary_state(self) -> dict[str, int]:
        return {"temporary_fib_routes": len(self.routes)}


class PitReflexiveHop(ForwarderHooks):
    """The draft's reflexive state in the PIT entry of the first Interest."""

    def configure(self, fw: Forwarder) -> None:
        """Nothing to register: the PIT carries the state."""

    def on_interest_propagate(self, fw: Forwarder, in_face: Face, interest: Interest,
                              entry: PitEntry) -> bool:
        rnp = read_reflexive_prefix(interest.app_parameters)
        if rnp is not None:
            entry.tags[RNP_TAG] = rnp
            return False
        if interest.name[:1] != RFX_PREFIX:
            return False
        first = self._first_interest(fw, interest.name)
        if first is None:
            fw.counters.drop("reflexive_without_state")
            fw.reject_pending_interest(entry)
            return True
        face = next((fw.faces.get(fid) for fid in first.in_records), None)
        if face is None or face is in_face:
            fw.counters.drop("reflexive_without_state")
            fw.reject_pending_interest(entry)
            return True
        fw.send_interest(entry, face, interest)
        return True

    @staticmethod
    def _first_interest(fw: Forwarder, name: Name) -> PitEntry | None:
        for entry in fw.pit:
            rnp = entry.tags.get(RNP_TAG)
            if rnp is not None and name[: len(rnp)] == rnp and not entry.erased:  # type: ignore[arg-type]
                return entry
        return None

    def temporary_state(self) -> dict[str, int]:
        return {}
