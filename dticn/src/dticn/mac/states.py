"""The MAC's state machines (GTS handshake, association and beacon tracking) as transition
tables, run by :func:`dticn.phy.radio_states.fire` like the transceiver's own table.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping


class GtsState(enum.StrEnum):
    """A device's view of one GTS it asks for (DSME-GTS request/response handshake)."""

    NONE = "none"
    REQUESTED = "requested"
    ALLOCATED = "allocated"
    DEALLOCATING = "deallocating"


class GtsEvent(enum.StrEnum):
    REQUEST = "request"              # DSME-GTS request sent in the CAP
    RESPONSE_OK = "response_ok"      # coordinator's response carries the slot
    RESPONSE_DENIED = "denied"       # no free slot
    TIMEOUT = "timeout"              # macResponseWaitTime expired
    DEALLOCATE = "deallocate"
    DEALLOCATED = "deallocated"
    STATIC = "static"                # configured without handshake (the artifact)


GTS_TRANSITIONS: Mapping[tuple[GtsState, GtsEvent], GtsState] = {
    (GtsState.NONE, GtsEvent.REQUEST): GtsState.REQUESTED,
    (GtsState.NONE, GtsEvent.STATIC): GtsState.ALLOCATED,
    (GtsState.REQUESTED, GtsEvent.RESPONSE_OK): GtsState.ALLOCATED,
    (GtsState.REQUESTED, GtsEvent.RESPONSE_DENIED): GtsState.NONE,
    (GtsState.REQUESTED, GtsEvent.TIMEOUT): GtsState.NONE,
    (GtsState.ALLOCATED, GtsEvent.DEALLOCATE): GtsState.DEALLOCATING,
    (GtsState.DEALLOCATING, GtsEvent.DEALLOCATED): GtsState.NONE,
    (GtsState.DEALLOCATING, GtsEvent.TIMEOUT): GtsState.NONE,
}


class SyncState(enum.StrEnum):
    """An end node's association and beacon tracking."""

    UNASSOCIATED = "unassociated"    # scanning for a beacon
    ASSOCIATING = "associating"      # association request sent, waiting for the response
    TRACKING = "tracking"            # associated, waking for every beacon
    LOST = "lost"                    # macMaxLostBeacons missed: scan again


class SyncEvent(enum.StrEnum):
    BEACON_FOUND = "beacon_found"
    ASSOCIATION_REQUESTED = "association_requested"
    ASSOCIATED = "associated"
    ASSOCIATION_FAILED = "association_failed"
    BEACON_LOST = "beacon_lost"      # one missed beacon (stays tracking)
    SYNC_LOST = "sync_lost"          # macMaxLostBeacons consecutive misses
    STATIC = "static"                # pre-associated, as in the artifact


SYNC_TRANSITIONS: Mapping[tuple[SyncState, SyncEvent], SyncState] = {
    (SyncState.UNASSOCIATED, SyncEvent.BEACON_FOUND): SyncState.UNASSOCIATED,
    (SyncState.UNASSOCIATED, SyncEvent.ASSOCIATION_REQUESTED): SyncState.ASSOCIATING,
    (SyncState.UNASSOCIATED, SyncEvent.STATIC): SyncState.TRACKING,
    (SyncState.ASSOCIATING, SyncEvent.ASSOCIATED): SyncState.TRACKING,
    (SyncState.ASSOCIATING, SyncEvent.ASSOCIATION_FAILED): SyncState.UNASSOCIATED,
    (SyncState.ASSOCIATING, SyncEvent.BEACON_LOST): SyncState.ASSOCIATING,
    (SyncState.ASSOCIATING, SyncEvent.BEACON_FOUND): SyncState.ASSOCIATING,
    (SyncState.TRACKING, SyncEvent.BEACON_FOUND): SyncState.TRACKING,
    (SyncState.TRACKING, SyncEvent.BEACON_LOST): SyncState.TRACKING,
    (SyncState.TRACKING, SyncEvent.SYNC_LOST): SyncState.LOST,
    (SyncState.LOST, SyncEvent.BEACON_FOUND): SyncState.TRACKING,
}
