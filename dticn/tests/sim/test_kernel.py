"""The event kernel: ordering, cancellation, horizon and Clock conformance."""

import pytest

from dticn.clock import Clock
from dticn.sim.kernel import EventKernel


def test_events_run_in_time_then_priority_then_fifo_order() -> None:
    kernel = EventKernel()
    seen: list[str] = []
    kernel.call_later(2.0, seen.append, "late")
    kernel.call_later(1.0, seen.append, "b")
    kernel.call_later(1.0, seen.append, "c")
    kernel.call_later(1.0, seen.append, "a-first", priority=-1)
    kernel.run()
    assert seen == ["a-first", "b", "c", "late"]
    assert kernel.now() == 2.0
    assert kernel.events_processed == 4


def test_cancelled_event_never_runs() -> None:
    kernel = EventKernel()
    seen: list[int] = []
    handle = kernel.call_later(1.0, seen.append, 1)
    kernel.call_later(2.0, seen.append, 2)
    handle.cancel()
    kernel.run()
    assert seen == [2]


def test_run_until_stops_at_horizon_and_leaves_later_events() -> None:
    kernel = EventKernel()
    seen: list[float] = []
    for t in (1.0, 5.0, 10.0):
        kernel.call_at(t, lambda t=t: seen.append(t))
    kernel.run(until=6.0)
    assert seen == [1.0, 5.0]
    assert kernel.now() == 6.0
    kernel.run()
    assert seen == [1.0, 5.0, 10.0]


def test_events_scheduled_from_callbacks_run_in_order() -> None:
    kernel = EventKernel()
    seen: list[float] = []

    def tick() -> None:
        seen.append(kernel.now())
        if len(seen) < 3:
            kernel.call_later(0.5, tick)

    kernel.call_later(0.0, tick)
    kernel.run()
    assert seen == [0.0, 0.5, 1.0]


def test_past_and_negative_schedules_are_refused() -> None:
    kernel = EventKernel(start=10.0)
    with pytest.raises(ValueError, match="before now"):
        kernel.call_at(5.0, lambda: None)
    with pytest.raises(ValueError, match="delay must be >= 0"):
        kernel.call_later(-1.0, lambda: None)


def test_kernel_is_a_clock() -> None:
    assert isinstance(EventKernel(), Clock)
