"""The link refreshes are spaced so that they take at most their share of the training."""

import itertools

from pactrain.compression.communicator import Communicator
from pactrain.refresh_pacer import REFRESH_SHARE, RefreshPacer


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _steps(pacer: RefreshPacer, clock: Clock, first: int, last: int, step_s: float) -> list[int]:
    """Completed-step counts at which the pacer called for a refresh, each refresh taking
    ``refresh_s`` of the clock."""
    due = []
    for done in range(first, last + 1):
        clock.now += step_s
        if pacer.due(done):
            due.append(done)
            clock.now += 0.5  # the refresh itself
            pacer.refreshed(done, 0.5, Communicator())
    return due


def test_a_costly_refresh_on_short_steps_comes_rarely() -> None:
    clock = Clock()
    pacer = RefreshPacer(50, clock=clock)
    due = _steps(pacer, clock, 1, 20_000, 0.05)
    # 0.5 s a refresh at 1% of 0.05 s steps: 1,000 steps apart, the first at the shortest
    assert due[0] == 50
    assert all(abs(b - a - 1000) <= 1 for a, b in itertools.pairwise(due))
    assert 0.5 * len(due) <= REFRESH_SHARE * 0.05 * 20_000 + 0.5


def test_a_cheap_refresh_keeps_the_users_interval() -> None:
    clock = Clock()
    pacer = RefreshPacer(50, clock=clock)
    assert _steps(pacer, clock, 1, 200, 100.0) == [50, 100, 150, 200]


def test_refresh_every_zero_turns_refreshes_off_and_the_pace_resumes() -> None:
    clock = Clock()
    assert _steps(RefreshPacer(0, clock=clock), clock, 1, 500, 0.05) == []
    pacer = RefreshPacer(50, clock=clock)
    _steps(pacer, clock, 1, 60, 0.05)
    resumed = RefreshPacer(50, clock=clock)
    resumed.load_state_dict(pacer.state_dict())
    assert resumed.next_done == pacer.next_done == 1050
