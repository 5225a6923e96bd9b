"""Hooks where gateway schemes plug into the forwarder without editing its pipelines.

A scheme subclasses :class:`ForwarderHooks`; the forwarder gets the instance at its
construction and keeps it (compose hooks by wrapping, never by replacing them later).
Everything a hook needs comes with it at its construction or in the call (the forwarder
is an argument of every hook), so no hook is bound to its forwarder afterwards; what
the hooks need in the forwarder's own tables they add in :meth:`ForwarderHooks.configure`,
which the forwarder's builder calls once, before any packet moves. Each hook returns
whether it took over; the default implementations take over nothing, so a plain
forwarder behaves like NFD.

* :meth:`ForwarderHooks.on_interest_propagate`: after a CS miss and PIT insertion,
  before the strategy forwards. A RICE-like gateway answers at once with a wait hint
  (``fw.answer_interest(entry, data)``) and takes over the Interest itself; NDN
  polling just returns False.
* :meth:`ForwarderHooks.on_unsolicited_data`: Data that matched no PIT entry. The hook
  returns an :class:`UnsolicitedDataVerdict`: ``DROP``, ``CACHE`` or ``CACHE_PINNED`` (LRU
  never evicts it). A push-scheme gateway wraps and pins the item itself and emits an
  ``/RNP`` Interest; a pushing node sends it up its LoRa face.
* :meth:`ForwarderHooks.on_reflexive_interest`: an Interest under a prefix registered
  with ``fw.add_reflexive_prefix`` (draft-irtf-icnrg-reflexive-forwarding): runs before
  the PIT/FIB so the hook can route it by reverse state kept in another PIT entry's
  ``tags`` and call ``fw.send_interest`` itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from dticn.forwarder.native import mypyc_attr

if TYPE_CHECKING:
    from dticn.forwarder.face import Face
    from dticn.forwarder.forwarder import Forwarder
    from dticn.forwarder.pit import PitEntry
    from dticn.packets.ndn import Data, Interest


class UnsolicitedDataVerdict:
    """What to do with Data that no PIT entry asked for."""

    DROP: Final = "drop"
    CACHE: Final = "cache"
    CACHE_PINNED: Final = "cache-pinned"


@mypyc_attr(allow_interpreted_subclasses=True)
class ForwarderHooks:
    """Default hooks: take over nothing."""

    def configure(self, fw: Forwarder) -> None:
        """Add what these hooks need to ``fw``'s tables (reflexive prefixes, per-prefix
        retransmission policies); keep no reference to ``fw``. Composed hooks configure
        the hooks they wrap."""

    def on_interest_propagate(
        self, fw: Forwarder, in_face: Face, interest: Interest, entry: PitEntry
    ) -> bool:
        """Return True when the hook handled the Interest (strategy is skipped)."""
        return False

    def on_unsolicited_data(self, fw: Forwarder, in_face: Face, data: Data) -> str:
        """Return an :class:`UnsolicitedDataVerdict` value."""
        return UnsolicitedDataVerdict.DROP

    def on_reflexive_interest(
        self, fw: Forwarder, in_face: Face, interest: Interest
    ) -> bool:
        """Return True when the hook handled the Interest (normal pipeline skipped)."""
        return False
