"""What a DSME MAC instance is given (platform) and what it gives back (requests, events).

The MAC reaches time, randomness and the radio only through :class:`Platform`, so the
same MAC code runs on the event kernel here and could run on a real-time driver.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from dticn.clock import Clock, TimerHandle
from dticn.mac.frames import Frame
from dticn.phy.airtime import LoRaParams
from dticn.phy.dutycycle import DutyCycleTracker
from dticn.phy.radio_states import RadioState

RECEPTION_MARGIN_S = 1e-6
"""A timer that found the receiver busy runs again this long after the frame's end."""


class RadioDriver(Protocol):
    """The transceiver operations the MAC uses (see :mod:`dticn.phy.radio`).

    ``receiving_until`` is the end of the frame the receiver is locked on (meaningful while
    :meth:`receiving` is True).
    """

    sf: int
    state: RadioState
    receiving_until: float

    def wake(self) -> None: ...
    def sleep(self) -> None: ...
    def idle(self) -> None: ...
    def start_rx(self, channel: int) -> None: ...
    def receiving(self) -> bool: ...
    def transmit(self, channel: int, dst: int, frame: Frame, airtime_s: float,
                 on_done: Callable[[], Any]) -> Any: ...
    def cad(self, channel: int, duration_s: float, on_result: Callable[[bool], Any]) -> None: ...


@dataclass
class Platform:
    """Clock, randomness, radio, modulation and duty-cycle book of one MAC instance."""

    clock: Clock
    rng: random.Random
    radio: RadioDriver
    phy: LoRaParams
    duty: DutyCycleTracker

    def after_reception(self, callback: Callable[..., Any], *args: Any) -> TimerHandle | None:
        """Receiver busy: run ``callback(*args)`` just after the frame being received ends
        and return its timer; None (and nothing scheduled) when no frame is arriving.

        Every window that closes (ACK wait, beacon, downlink GTS, CAP listening) asks this
        first: a frame whose preamble was heard keeps the window open until it ends.
        """
        if not self.radio.receiving():
            return None
        return self.clock.call_later(
            self.radio.receiving_until - self.clock.now() + RECEPTION_MARGIN_S, callback, *args)


class Status(enum.StrEnum):
    DELIVERED = "delivered"                           # ACK received (or broadcast sent)
    NO_ACK = "no_ack"                                 # macMaxFrameRetries exhausted
    CHANNEL_ACCESS_FAILURE = "channel_access_failure" # CSMA/CA gave up
    QUEUE_FULL = "queue_full"


@dataclass(eq=False)
class MacRequest:
    """One ``send`` by the upper layer; ``on_result(request)`` fires once when it ends."""

    dest: int
    payload: bytes
    slot: str
    created: float
    on_result: Callable[[MacRequest], Any] | None = None
    attempts: int = 0
    status: Status | None = None
    finished: float | None = None
    delivered_at: float | None = None
    context: Any = None

    def close(self, status: Status, now: float) -> None:
        """Stamp the request finished with ``status`` at ``now`` (every MAC does it so)."""
        self.status = status
        self.finished = now
        if status is Status.DELIVERED and self.delivered_at is None:
            self.delivered_at = now


@dataclass(frozen=True)
class MacEvent:
    """What observers see: ``kind`` is e.g. 'tx', 'delivered', 'failed', 'beacon_lost'."""

    time: float
    node: int
    kind: str
    request: MacRequest | None = None
    detail: dict[str, Any] = field(default_factory=dict)


MacObserver = Callable[[MacEvent], None]
