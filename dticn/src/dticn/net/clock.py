"""A real-time :class:`dticn.clock.Clock` on top of asyncio, optionally time-scaled.

``time_scale = k`` makes the clock run ``k`` times faster than the wall clock: a 30.72 s
DSME multisuperframe passes in 30.72 / k wall seconds, so a gateway emulation can run
the simulator's models in scaled real time. ``now()`` starts at ``start`` when the
clock is created.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any


class AsyncioTimer:
    """Adapter from ``asyncio.TimerHandle`` to :class:`dticn.clock.TimerHandle`."""

    __slots__ = ("_handle", "_when")

    def __init__(self, handle: asyncio.TimerHandle, when: float) -> None:
        self._handle = handle
        self._when = when

    def cancel(self) -> None:
        self._handle.cancel()

    @property
    def when(self) -> float:
        return self._when


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
        self.time_scale = time_scale
        self._origin = self._loop.time()
        self._start = start

    def now(self) -> float:
        """Clock time: ``start + (loop time elapsed) * time_scale``."""
        return self._start + (self._loop.time() - self._origin) * self.time_scale

    def call_later(
        self, delay: float, callback: Callable[..., Any], *args: Any
    ) -> AsyncioTimer:
        """Run ``callback(*args)`` after ``delay`` clock seconds."""
        if delay < 0:
            raise ValueError(f"delay must be >= 0, got {delay!r}")
        handle = self._loop.call_later(delay / self.time_scale, callback, *args)
        return AsyncioTimer(handle, self.now() + delay)
