"""The forwarder's table sizes and policy switches, as data (:class:`ForwarderConfig`).

Why a module of its own: scenarios, the daemon and the CLI build a configuration without
the forwarder's pipelines, and the pipelines module stays one file of pipelines (as NFD's
``forwarder.cpp``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dticn.forwarder.retx import RetxPolicy
from dticn.packets.name import MAX_NAME_BYTES, MAX_NAME_COMPONENTS


@dataclass(slots=True)
class ForwarderConfig:
    """Table sizes and defaults; scenarios build these as data.

    Args:
        pit_capacity: most PIT entries; a flood of distinct Interests beyond it is
            dropped (reason ``pit_full``) and Nacked with Congestion.
        cs_capacity / cs_pinned_capacity: Content Store bounds.
        default_strategy: strategy name at the root prefix.
        default_retx: policy when neither prefix nor face sets one.
        dead_nonce_lifetime: seconds a finished nonce is remembered.
        pit_covers_in_records: with a fixed PIT lifetime (a CCN-lite policy), still keep an
            entry until its downstream Interests' own lifetimes end (NFD's rule), so the
            fixed lifetime is a minimum. Off by default (CCN-lite: the fixed lifetime wins,
            which is what V2's 4 s forwarder means); the emulated gateway turns it on so
            an application's longer InterestLifetime is honoured.
        uncached_content_types: Data of these MetaInfo ContentTypes is forwarded but never
            admitted to the CS (signals such as a gateway's NACK or wait hint answer one
            Interest, never a later one; the artifact's CCN-lite forwarders refuse them the
            same way, ``filter_ack_nack_wait_on_data_cb`` in
            external_modules/ccn-lite-helpers/ccn-lite-helpers.c). Empty: NFD's rule, all
            Data is cached.
        forward_retransmissions: a downstream retransmission (an Interest from a face
            already in the entry's in-records) is sent upstream again, as NFD does. False:
            it is only appended to the live entry, as CCN-lite does (only a new entry is
            propagated; ``ccnl_fwd_handleInterest``), so one request costs one upstream
            Interest plus the forwarder's own retransmissions.
        max_interest_lifetime_ms: the longest InterestLifetime honoured; a longer one is
            shortened to it (counted in ``lifetimes_capped``), so no client keeps PIT
            state for longer than this. NFD applies whatever the Interest asks; ours is a
            bound of our choosing, long enough for DT-ICN's delay-tolerant Interests
            (RICE asks for its ETA plus 64 s). None: no cap.
        pit_face_quota: most PIT entries one face may wait on (in-records); beyond it a
            new Interest from that face is Nacked Congestion (drop ``pit_face_quota``),
            so one face flooding Interests nobody answers cannot take the PIT from the
            others. None: only ``pit_capacity`` bounds a face.
        max_name_components / max_name_bytes: longest Name accepted (components and
            TLV-VALUE bytes) in Interests, Data and Nacks (drop ``name_too_long``).
            By default what the 8800-byte packet limit allows
            (:data:`~dticn.packets.name.MAX_NAME_BYTES`), so every name that fits in a
            valid packet is accepted; a deployment may set less.
        routes_per_face: most FIB next hops one face may hold through prefix
            registration (:mod:`dticn.mgmt.nfd` refuses more with 403); the global
            bound is ``fib_capacity``.
        cs_face_share: the fraction of ``cs_capacity`` one face's Data may occupy; a
            face at its share replaces its own least recently used entry (counted in
            ``cs_evictions["face_quota"]``), so a producer face answering a flood cannot
            evict every other face's cache. At least one entry. None: no per-face bound
            (only the LRU).
    """

    pit_capacity: int = 65_536
    cs_capacity: int = 10_000
    cs_pinned_capacity: int = 1_000
    fib_capacity: int = 100_000
    default_strategy: str = "best-route"
    default_retx: RetxPolicy = field(default_factory=RetxPolicy)
    dead_nonce_lifetime: float = 6.0
    max_lp_nesting: int = 1
    pit_covers_in_records: bool = False
    uncached_content_types: frozenset[int] = frozenset()
    forward_retransmissions: bool = True
    max_interest_lifetime_ms: int | None = 3_600_000
    pit_face_quota: int | None = 16_384
    max_name_components: int = MAX_NAME_COMPONENTS
    max_name_bytes: int = MAX_NAME_BYTES
    routes_per_face: int = 1_000
    cs_face_share: float | None = 0.5

    def cs_face_quota(self) -> int | None:
        """Entries one face may hold in the CS (from ``cs_face_share``)."""
        if self.cs_face_share is None:
            return None
        if not 0 < self.cs_face_share <= 1:
            raise ValueError(
                f"cs_face_share must be in (0, 1] (or None for no quota), got "
                f"{self.cs_face_share}"
            )
        return max(1, int(self.cs_capacity * self.cs_face_share))
