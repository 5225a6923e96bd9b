"""The transceiver's state table, and the transition-table machinery every state machine of
the radio side uses (the MAC's GTS and synchronisation tables are in :mod:`dticn.mac.states`).

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
