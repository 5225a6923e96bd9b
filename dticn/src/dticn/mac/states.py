"""Every state machine of the radio side, as transition tables in one module.

A table maps ``(state, event) -> next state``; :func:`fire` refuses anything else with
an :class:`IllegalTransition` naming the allowed events, so a MAC bug surfaces where it
happens instead of as a wrong energy figure much later.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import TypeVar

S = TypeVar("S", bound=enum.Enum)
E = TypeVar("E", bound=enum.Enum)


class IllegalTransition(RuntimeError):
    """A state machine was asked for a transition its table does not contain."""


class RadioState(enum.StrEnum):
    """Transceiver states of an SX1276-class radio (energy is booked per state)."""

    SLEEP = "sleep"
    STANDBY = "standby"
    CAD = "cad"
    RX = "rx"
    TX = "tx"


class RadioEvent(enum.StrEnum):
    WAKE = "wake"            # sleep -> standby (oscillator start-up)
    SLEEP = "sleep"
    IDLE = "idle"            # back to standby (end of RX window, TX done, CAD done)
    START_RX = "start_rx"
    START_TX = "start_tx"
    START_CAD = "start_cad"


RADIO_TRANSITIONS: Mapping[tuple[RadioState, RadioEvent], RadioState] = {
    (RadioState.SLEEP, RadioEvent.WAKE): RadioState.STANDBY,
    (RadioState.STANDBY, RadioEvent.SLEEP): RadioState.SLEEP,
    (RadioState.STANDBY, RadioEvent.START_RX): RadioState.RX,
    (RadioState.STANDBY, RadioEvent.START_TX): RadioState.TX,
    (RadioState.STANDBY, RadioEvent.START_CAD): RadioState.CAD,
    (RadioState.CAD, RadioEvent.IDLE): RadioState.STANDBY,
    (RadioState.RX, RadioEvent.IDLE): RadioState.STANDBY,
    (RadioState.RX, RadioEvent.START_TX): RadioState.TX,   # RX -> TX turnaround (ACK)
    (RadioState.TX, RadioEvent.IDLE): RadioState.STANDBY,
    (RadioState.TX, RadioEvent.START_RX): RadioState.RX,   # TX -> RX turnaround (wait ACK)
}


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


def fire(table: Mapping[tuple[S, E], S], state: S, event: E) -> S:
    """The state after ``event`` in ``state``; raises :class:`IllegalTransition` otherwise."""
    try:
        return table[(state, event)]
    except KeyError:
        allowed = sorted(e.value for (s, e) in table if s == state)
        raise IllegalTransition(
            f"{event.value!r} is not allowed in state {state.value!r} (allowed: {allowed}); "
            "the caller skipped a step of the state machine"
        ) from None
