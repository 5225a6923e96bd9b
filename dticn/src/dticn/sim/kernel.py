"""A small deterministic discrete-event kernel.

A heap of ``(time, priority, sequence, event)``: events at equal time run by priority,
then in scheduling order, so a run is a pure function of the scenario and its seed.
The kernel implements :class:`dticn.clock.Clock`, which is how protocol cores see it;
a real-time driver of the same kernel lives elsewhere (a different driver, not a
different program, as in SimPy).

Complexity: ``O(log n)`` per scheduled event, cancelled events are skipped lazily
when popped (``O(1)`` cancel).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(slots=True)
class ScheduledEvent:
    """A scheduled callback; also the :class:`dticn.clock.TimerHandle`.

    The heap holds plain ``(when, priority, sequence, event)`` tuples, so ordering is
    decided by C-level tuple comparison (``sequence`` is unique, so ``event`` itself is
    never compared); a dataclass ``__lt__`` costed about a fifth of a busy run.
    """

    when: float
    priority: int
    sequence: int
    callback: Callable[..., Any]
    args: tuple[Any, ...] = ()
    cancelled: bool = False

    def cancel(self) -> None:
        """Mark the event so the kernel skips it, and let go of what the callback held
        (a cancelled PIT expiry timer must not keep its entry alive until it is
        popped, possibly an hour later)."""
        self.cancelled = True
        self.callback = _cancelled
        self.args = ()


def _cancelled(*_args: Any) -> None:
    """What a cancelled event holds instead of its callback (never run)."""


class EventKernel:
    """Virtual-time event loop; deterministic for a given schedule of events."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)
        self._heap: list[tuple[float, int, int, ScheduledEvent]] = []
        self._sequence = itertools.count()
        self.events_processed = 0

    def now(self) -> float:
        """Current virtual time in seconds."""
        return self._now

    def call_at(
        self, when: float, callback: Callable[..., Any], *args: Any, priority: int = 0
    ) -> ScheduledEvent:
        """Schedule ``callback(*args)`` at absolute time ``when`` (not in the past)."""
        if when < self._now:
            raise ValueError(
                f"cannot schedule at t={when!r} before now={self._now!r}: "
                "events run forward in time; use call_later with a delay >= 0"
            )
        sequence = next(self._sequence)
        event = ScheduledEvent(float(when), priority, sequence, callback, args)
        heapq.heappush(self._heap, (event.when, priority, sequence, event))
        return event

    def call_later(
        self, delay: float, callback: Callable[..., Any], *args: Any, priority: int = 0
    ) -> ScheduledEvent:
        """Schedule ``callback(*args)`` after ``delay`` seconds of virtual time."""
        if delay < 0:
            raise ValueError(f"delay must be >= 0, got {delay!r}")
        return self.call_at(self._now + delay, callback, *args, priority=priority)

    def peek(self) -> float | None:
        """Time of the next live event, or ``None`` when nothing is scheduled."""
        heap = self._heap
        while heap and heap[0][3].cancelled:
            heapq.heappop(heap)
        return heap[0][0] if heap else None

    def step(self) -> bool:
        """Run the next live event; return ``False`` when the heap is empty."""
        while self._heap:
            event = heapq.heappop(self._heap)[3]
            if event.cancelled:
                continue
            self._now = event.when
            self.events_processed += 1
            event.callback(*event.args)
            return True
        return False

    def run(self, until: float | None = None) -> None:
        """Run events in time order up to and including ``until`` (or until none remain).

        When ``until`` is given the clock ends exactly at ``until``, so energy and
        duty-cycle accounting over the horizon sees the full interval.
        """
        while True:
            nxt = self.peek()
            if nxt is None or (until is not None and nxt > until):
                break
            self.step()
        if until is not None and until > self._now:
            self._now = float(until)
