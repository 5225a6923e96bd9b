"""The clock interface every time-dependent part of DT-ICN uses.

Protocol cores (forwarder, MAC, gateway schemes) never read the wall clock and never
sleep: they ask a :class:`Clock` for the time and for timers. The discrete-event
kernel (:mod:`dticn.sim.kernel`) implements it in virtual time; the asyncio driver
implements it in real (optionally scaled) time. One core therefore runs unchanged in the
simulator, in emulation and over real sockets (sans-IO, as h11 and python-ndn do it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class TimerHandle(Protocol):
    """A scheduled callback that can still be cancelled."""

    def cancel(self) -> None:
        """Stop the callback from running; cancelling twice or after it ran is a no-op."""

    @property
    def when(self) -> float:
        """Absolute time (seconds, clock's epoch) at which the callback fires."""


@runtime_checkable
class Clock(Protocol):
    """Time source and timer service, in seconds as floats."""

    def now(self) -> float:
        """Current time in seconds since the clock's epoch."""

    def call_later(
        self, delay: float, callback: Callable[..., Any], *args: Any
    ) -> TimerHandle:
        """Run ``callback(*args)`` after ``delay`` seconds (``delay >= 0``)."""
