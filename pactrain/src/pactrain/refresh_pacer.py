"""When the adaptive policy next re-measures the link: often enough to follow a link that
changes, rarely enough that re-measuring costs at most a set share of the training time.

Why: a refresh is a barrier, a probe of the link (eight all-reduces, the largest sized to
about 50 ms of the link) and the overlap plan, all on the critical path. Every 50 steps,
as it ran before pacing, it cost the held-out ``fashion-mlp`` at 10 Mbit/s (4 workers,
a 0.05 s step) 10 ms a step, 18% of its training time (0.065 against 0.055 s a step
without refreshes, 150 steps, 2026-12-07). So each refresh's cost and the steps between
refreshes are timed, the group agrees on both (one 16-byte control all-reduce), and the
next refresh comes after ``max(shortest, cost / (share x step))`` steps: at most
``share`` of the training time goes to refreshes, and never sooner than the user's
``refresh_every``.

Cost per step: one ``perf_counter`` and a deque append; the median is taken at a refresh.
"""

from __future__ import annotations

import math
import statistics
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch.distributed as dist

from pactrain.compression.communicator import Communicator
from pactrain.policy import agree_numbers

#: Share of the training time the refreshes may take.
REFRESH_SHARE = 0.01

#: Step durations kept for the median (the latest ones: the link now).
STEP_WINDOW = 64


@dataclass
class RefreshPacer:
    """Decides the steps at which the policy refreshes; every rank decides alike.

    Attributes:
        shortest: the fewest steps between refreshes (``refresh_every``); 0 turns them off.
        share: :data:`REFRESH_SHARE`.
        next_done: the completed-step count of the next refresh.
        clock: seconds (a test passes its own).
    """

    shortest: int
    share: float = REFRESH_SHARE
    next_done: int | None = None
    clock: Callable[[], float] = field(default=time.perf_counter, repr=False)
    _last_tick: float | None = field(default=None, repr=False)
    _steps_s: deque[float] = field(default_factory=lambda: deque(maxlen=STEP_WINDOW),
                                   repr=False)

    def __post_init__(self) -> None:
        if self.next_done is None:
            self.next_done = self.shortest

    def due(self, done: int) -> bool:
        """Whether the refresh runs after ``done`` completed steps (and time that step)."""
        now = self.clock()
        if self._last_tick is not None:
            self._steps_s.append(now - self._last_tick)
        self._last_tick = now
        return self.shortest > 0 and done == self.next_done

    def refreshed(self, done: int, cost_s: float, comm: Communicator) -> int:
        """Set the next refresh from this one's ``cost_s`` and the median step; returns
        the steps until it. Collective: every rank calls it after the same refresh."""
        step_s = statistics.median(self._steps_s) if self._steps_s else 0.0
        cost_s, step_s = agree_numbers([cost_s, step_s], comm, dist.ReduceOp.SUM)
        gap = self.shortest
        if step_s > 0:
            gap = max(gap, math.ceil(cost_s / (self.share * step_s)))
        self.next_done = done + gap
        # the refresh's own time is not a step's: the next duration starts after it
        self._last_tick = self.clock()
        return gap

    def state_dict(self) -> dict[str, Any]:
        return {"next_done": self.next_done}

    def load_state_dict(self, state: dict[str, Any] | None) -> None:
        if state is not None:
            self.next_done = int(state["next_done"])
