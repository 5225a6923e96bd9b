"""A real-time :class:`dticn.clock.Clock` on top of asyncio, optionally time-scaled.

``time_scale = k`` makes the clock run ``k`` times faster than the wall clock: a 30.72 s
DSME multisuperframe passes in 30.72 / k wall seconds, so a gateway emulation can run
the simulator's models in scaled real time. ``now()`` starts at ``start`` when the
clock is created.

Timers are the clock's own: a heap of :class:`AsyncioTimer` behind one asyncio timer
for the earliest of them. The forwarder arms a timer for every PIT entry and cancels
almost all of them (the Data comes first); an asyncio ``TimerHandle`` each cost a
context copy, an object with rich comparisons sifted through asyncio's heap, and a
cancellation callback, a tenth of the forwarder's time over sockets. Here a timer is
a small slotted object and a ``(when, sequence, timer)`` tuple that compares in C; a
cancelled one is only marked, and the heap is rebuilt without them once they are more
than half of it (as asyncio does with its own), so cancelling is O(1) amortised.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

_COMPACT_MIN = 512
"""Cancelled timers tolerated in the heap before a rebuild is considered."""


class AsyncioTimer:
    """One pending callback of an :class:`AsyncioClock` (a :class:`dticn.clock.TimerHandle`)."""

    __slots__ = ("_args", "_callback", "_clock", "cancelled", "when")

    def __init__(
        self, clock: AsyncioClock, when: float, callback: Callable[..., Any], args: tuple
    ) -> None:
        self.when = when
        self._callback: Callable[..., Any] | None = callback
        self._args = args
        self._clock: AsyncioClock | None = clock
        self.cancelled = False

    def cancel(self) -> None:
        """Stop the callback; a no-op once it ran or was cancelled."""
        clock = self._clock
        if clock is not None:
            self._clock = None
            self.cancelled = True
            self._callback = None
            self._args = ()
            clock._timer_cancelled()


class AsyncioClock:
    """Clock in (scaled) real time, backed by the running asyncio loop."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop | None = None,
        *,
        time_scale: float = 1.0,
        start: float = 0.0,
    ) -> None:
        if time_scale <= 0:
            raise ValueError(f"time_scale must be > 0 (1.0 = real time), got {time_scale}")
        self._loop = loop or asyncio.get_running_loop()
        # asyncio's own loops read time.monotonic(); calling it directly saves a Python
        # call on every now() (the forwarder asks several times per packet)
        base_time = getattr(asyncio.BaseEventLoop, "time", None)
        self._loop_time: Callable[[], float] = (
            time.monotonic if type(self._loop).time is base_time else self._loop.time
        )
        self.time_scale = time_scale
        self._origin = self._loop_time()
        self._start = start
        self._heap: list[tuple[float, int, AsyncioTimer]] = []
        self._sequence = itertools.count()
        self._cancelled = 0
        self._handle: asyncio.TimerHandle | None = None
        self._armed_at = 0.0
        # asyncio runs a timer up to its clock resolution early; so may we
        self._slack = time.get_clock_info("monotonic").resolution * time_scale

    def now(self) -> float:
        """Clock time: ``start + (loop time elapsed) * time_scale``."""
        return self._start + (self._loop_time() - self._origin) * self.time_scale

    def call_later(
        self, delay: float, callback: Callable[..., Any], *args: Any
    ) -> AsyncioTimer:
        """Run ``callback(*args)`` after ``delay`` clock seconds."""
        if delay < 0:
            raise ValueError(f"delay must be >= 0, got {delay!r}")
        when = self.now() + delay
        timer = AsyncioTimer(self, when, callback, args)
        heapq.heappush(self._heap, (when, next(self._sequence), timer))
        if self._handle is None or when < self._armed_at:
            self._arm(when)
        return timer

    def pending(self) -> int:
        """Timers neither run nor cancelled."""
        return len(self._heap) - self._cancelled

    def _arm(self, when: float) -> None:
        if self._handle is not None:
            self._handle.cancel()
        self._armed_at = when
        loop_when = self._origin + (when - self._start) / self.time_scale
        self._handle = self._loop.call_at(loop_when, self._fire)

    def _fire(self) -> None:
        """Run every timer that is due, then wait for the next one. (``self._heap``
        is read afresh each time: a callback may cancel timers, which may rebuild it.)"""
        self._handle = None
        while self._heap:
            when, _, timer = self._heap[0]
            if when > self.now() + self._slack:
                break
            heapq.heappop(self._heap)
            if timer.cancelled:
                self._cancelled -= 1
                continue
            callback, args = timer._callback, timer._args
            timer._clock = timer._callback = None
            timer._args = ()
            try:
                callback(*args)  # type: ignore[misc]
            except Exception:
                # as asyncio's loop does for a failing callback: log it, run the others
                log.exception("timer callback %r raised", callback)
        if self._heap and not self._armed_for(self._heap[0][0]):
            self._arm(self._heap[0][0])

    def _armed_for(self, when: float) -> bool:
        """The asyncio timer is set for ``when``. (A method, so that :meth:`_fire` reads
        ``_handle`` afresh after the callbacks, which may have armed it: mypyc trusts the
        narrowing of an attribute to None across calls; docs/dticn-core.md "Performance".)"""
        return self._handle is not None and self._armed_at == when

    def _timer_cancelled(self) -> None:
        self._cancelled += 1
        heap = self._heap
        if self._cancelled > _COMPACT_MIN and self._cancelled * 2 > len(heap):
            self._heap = [item for item in heap if not item[2].cancelled]
            heapq.heapify(self._heap)
            self._cancelled = 0
            if not self._heap and self._handle is not None:
                self._handle.cancel()
                self._handle = None
