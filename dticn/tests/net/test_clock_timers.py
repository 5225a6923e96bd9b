"""AsyncioClock's own timer heap: order, cancellation, rebuild, failing callbacks."""

from __future__ import annotations

import asyncio
import logging

import pytest

from dticn.net.asyncio_clock import AsyncioClock


def test_timers_fire_in_time_order_and_cancelled_ones_never() -> None:
    async def run() -> tuple[list[int], list[float], int]:
        clock = AsyncioClock(time_scale=100.0)
        fired: list[int] = []
        handles = [clock.call_later(0.5 + (k % 7) * 0.1, fired.append, k) for k in range(2000)]
        for k, h in enumerate(handles):
            if k % 10:
                h.cancel()                 # 1800 cancelled: the heap is rebuilt on the way
        handles[0].cancel()
        handles[0].cancel()                # twice: a no-op
        await asyncio.sleep(0.05)
        return fired, [h.when for h in handles], clock.pending()

    fired, when, pending = asyncio.run(run())
    assert fired == sorted(range(10, 2000, 10), key=lambda k: (when[k], k))
    assert pending == 0


def test_a_timer_armed_from_a_callback_for_earlier_still_fires_first() -> None:
    async def run() -> list[str]:
        clock = AsyncioClock(time_scale=100.0)
        order: list[str] = []

        def first() -> None:
            order.append("a")
            clock.call_later(2.0, order.append, "late")

        clock.call_later(0.1, first)
        clock.call_later(1.0, order.append, "b")   # armed before "late", due before it
        await asyncio.sleep(0.05)
        return order

    assert asyncio.run(run()) == ["a", "b", "late"]


def test_a_failing_callback_is_logged_and_the_others_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def run() -> list[int]:
        clock = AsyncioClock(time_scale=100.0)
        out: list[int] = []
        clock.call_later(0.1, lambda: 1 / 0)
        clock.call_later(0.1, out.append, 1)
        await asyncio.sleep(0.02)
        return out

    with caplog.at_level(logging.ERROR, logger="dticn.net.asyncio_clock"):
        assert asyncio.run(run()) == [1]
    assert "ZeroDivisionError" in caplog.text
