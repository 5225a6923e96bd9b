"""Overlap timing: how much compute each bucket's transfer can hide behind (the gap until
the next bucket reaches the hook), which the adaptive policy plans with."""

from __future__ import annotations

import statistics
import time
from collections import deque
from collections.abc import Callable, Iterable

#: Steps of bucket gaps kept for the overlap plan (their median is used).
GAP_SAMPLES = 4


class OverlapTiming:
    """Each bucket's recent gaps, from the times its hook calls came in.

    Args:
        clock: seconds, monotonic (``time.perf_counter``; a test passes a fake).
    """

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self._clock = clock
        self._ready_at: list[tuple[int, float]] = []  # this step's hook calls (index, time)
        self.gap_samples: dict[int, deque[float]] = {}  # recent gaps per bucket index

    def note_ready(self, index: int) -> None:
        """Record when bucket ``index`` reached the hook (its gradients were ready)."""
        self._ready_at.append((index, self._clock()))

    def close_step(self) -> None:
        """Turn this step's hook calls into gaps: each bucket's time until the next
        bucket's call (the compute its transfer can hide behind); 0 for the last. A few
        steps are kept per bucket (their median is what the policy plans with)."""
        calls, self._ready_at = self._ready_at, []
        for position, (index, at) in enumerate(calls):
            gap = calls[position + 1][1] - at if position + 1 < len(calls) else 0.0
            self.gap_samples.setdefault(index, deque(maxlen=GAP_SAMPLES)).append(gap)

    def median_gaps(self, current: Iterable[int]) -> dict[int, float]:
        """The median recent gap of each bucket index in ``current`` that has one."""
        current = set(current)
        return {i: statistics.median(samples) for i, samples in self.gap_samples.items()
                if i in current and samples}
