"""A real-time driver of the :class:`~dticn.sim.kernel.EventKernel`.

One kernel, two drivers: ``kernel.run(until=...)`` is the simulator's driver (virtual time
jumps from event to event); :class:`RealtimeDriver` keeps the same kernel in step with the
wall clock, optionally scaled, so the very same models (MAC, forwarder, schemes) run
emulated behind real sockets.

Algorithm, on the running asyncio loop:

1. Virtual time is ``start + (wall - wall_start) * time_scale``
   (:class:`~dticn.net.asyncio_clock.AsyncioClock` does this mapping; it is reused, not copied).
2. A single asyncio timer is armed for the wall deadline of the kernel's next event.
3. When it fires, every event whose time is at or before the virtual now runs, in the
   kernel's order; each one records its *lag*, how far behind virtual now it ran. Then the
   kernel's clock is advanced to the virtual now and the timer is re-armed.
4. Events from outside (a packet from a socket) go through :meth:`RealtimeDriver.external`:
   first catch up (3), so the packet is stamped with the current virtual time, then run the
   callback, then re-arm (the callback may have scheduled something earlier than the armed
   deadline). Inside a kernel event ``external`` just calls through.

Lag is reported in virtual seconds (``LagStats``); divide by the time scale for wall seconds.
A driver that cannot keep up (too high a time scale for the host) shows growing lag: the
gateway logs it and serves it in its status.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from dticn.net.asyncio_clock import AsyncioClock
from dticn.sim.kernel import EventKernel

log = logging.getLogger(__name__)

T = TypeVar("T")

EARLY_TIMER_SLACK_S = 0.0005
"""Wall seconds asyncio may fire a timer early (clock resolution); re-arm for the rest."""


@dataclass
class LagStats:
    """How late events ran, in virtual seconds (an observer of the driver)."""

    events: int = 0
    total_s: float = 0.0
    max_s: float = 0.0
    late_events: int = 0
    late_threshold_s: float = 0.1

    def record(self, lag_s: float) -> None:
        """Book one event that ran ``lag_s`` virtual seconds after its time."""
        lag_s = max(lag_s, 0.0)
        self.events += 1
        self.total_s += lag_s
        if lag_s > self.max_s:
            self.max_s = lag_s
        if lag_s > self.late_threshold_s:
            self.late_events += 1

    @property
    def mean_s(self) -> float:
        """Mean lag per event (0 before any event)."""
        return self.total_s / self.events if self.events else 0.0

    def as_dict(self, time_scale: float) -> dict[str, float | int]:
        """JSON-friendly summary, in virtual and wall seconds."""
        return {
            "events": self.events,
            "lag_mean_s": self.mean_s,
            "lag_max_s": self.max_s,
            "lag_mean_wall_s": self.mean_s / time_scale,
            "lag_max_wall_s": self.max_s / time_scale,
            "late_events": self.late_events,
            "late_threshold_s": self.late_threshold_s,
        }


class RealtimeDriver:
    """Runs ``kernel`` in step with the wall clock on the running asyncio loop.

    Args:
        kernel: the kernel every model of the run is scheduled on.
        time_scale: virtual seconds per wall second (10 = ten times faster than real).
        loop: the asyncio loop (default: the running one).

    The kernel's clock must not be ahead of virtual time at :meth:`start` (build the
    models, then start the driver right away).
    """

    def __init__(self, kernel: EventKernel, *, time_scale: float = 1.0,
                 loop: asyncio.AbstractEventLoop | None = None) -> None:
        if time_scale <= 0:
            raise ValueError(f"time_scale must be > 0 (1 = real time, 10 = ten times "
                             f"faster), got {time_scale}")
        self.kernel = kernel
        self.time_scale = time_scale
        self._loop = loop
        self._clock: AsyncioClock | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._in_event = False
        self._stopped = False
        self.lag = LagStats()
        self.wall_epoch = 0.0
        """Unix time at which virtual time was 0 (lets other processes read virtual time)."""

    # -- time ------------------------------------------------------------------------
    def now(self) -> float:
        """Virtual time now (wall-clock based, not the kernel's last event time)."""
        if self._clock is None:
            raise RuntimeError("driver not started: call start() on the running loop first")
        return self._clock.now()

    def start(self) -> None:
        """Pin virtual time to the kernel's clock now and begin running events."""
        loop = self._loop or asyncio.get_running_loop()
        self._loop = loop
        self._clock = AsyncioClock(loop, time_scale=self.time_scale, start=self.kernel.now())
        self.wall_epoch = time.time() - self.kernel.now() / self.time_scale
        self._stopped = False
        self._arm()

    def stop(self) -> None:
        """Stop running events (the kernel keeps its state)."""
        self._stopped = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    # -- running ---------------------------------------------------------------------
    def catch_up(self) -> None:
        """Run every event due by now, then set the kernel's clock to now."""
        if self._in_event or self._clock is None:
            return
        kernel = self.kernel
        self._in_event = True
        try:
            vnow = self._clock.now()
            while True:
                nxt = kernel.peek()
                if nxt is None or nxt > vnow:
                    break
                self.lag.record(self._clock.now() - nxt)
                kernel.step()
            if vnow > kernel.now():
                kernel.run(until=vnow)       # nothing due is left: only moves the clock
        finally:
            self._in_event = False

    def external(self, callback: Callable[..., T], *args: Any) -> T:
        """Run ``callback(*args)`` at the current virtual time (socket input)."""
        if self._in_event or self._clock is None:
            return callback(*args)
        self.catch_up()
        self._in_event = True
        try:
            return callback(*args)
        finally:
            self._in_event = False
            self._arm()

    def _tick(self) -> None:
        self._timer = None
        try:
            self.catch_up()
        except Exception:
            log.exception("event raised in the real-time driver; continuing with the next")
        self._arm()

    def _arm(self) -> None:
        if self._stopped or self._clock is None or self._loop is None:
            return
        nxt = self.kernel.peek()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if nxt is None:
            return                       # woken by the next external event
        delay = max((nxt - self._clock.now()) / self.time_scale, 0.0)
        if delay < EARLY_TIMER_SLACK_S:
            delay = 0.0
        self._timer = self._loop.call_later(delay, self._tick)

    def status(self) -> dict[str, Any]:
        """Virtual time, scale, epoch and lag (what the gateway's status serves)."""
        out: dict[str, Any] = {
            "virtual_now_s": self.now() if self._clock is not None else self.kernel.now(),
            "kernel_now_s": self.kernel.now(),
            "time_scale": self.time_scale,
            "wall_epoch": self.wall_epoch,
        }
        out.update(self.lag.as_dict(self.time_scale))
        return out
