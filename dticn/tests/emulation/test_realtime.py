"""The real-time driver runs the EventKernel in step with (scaled) wall time."""

from __future__ import annotations

import asyncio
import time

import pytest

from dticn.emulation.edge_scenario import EdgeScenario
from dticn.emulation.emulated_edge import Edge
from dticn.emulation.realtime import LagStats, RealtimeDriver
from dticn.sim.kernel import EventKernel


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(coro)


def test_events_run_at_their_scaled_wall_time_never_early() -> None:
    kernel = EventKernel()
    seen: list[tuple[float, float, float]] = []   # (when, virtual now at run, wall)

    async def main() -> RealtimeDriver:
        driver = RealtimeDriver(kernel, time_scale=20.0)
        for when in (0.5, 1.0, 2.0, 4.0):
            kernel.call_at(when, lambda w=when: seen.append((w, driver.now(), time.monotonic())))
        t0 = time.monotonic()
        driver.start()
        await asyncio.sleep(4.0 / 20 + 0.3)
        driver.stop()
        seen.insert(0, (0.0, 0.0, t0))
        return driver

    driver = run(main())
    assert [w for w, _, _ in seen[1:]] == [0.5, 1.0, 2.0, 4.0]
    t0 = seen[0][2]
    for when, vnow, wall in seen[1:]:
        assert vnow >= when - 0.02, "an event ran before its virtual time"
        assert wall - t0 >= when / 20 - 0.002, "an event ran before its wall deadline"
    assert driver.lag.events == 4
    assert driver.lag.max_s >= 0.0
    # loaded CI hosts: generous, but a driver that ignored the scale (real time) would fail
    assert seen[-1][2] - t0 < 4.0 / 2


def test_external_input_is_stamped_now_and_rearms_the_timer() -> None:
    kernel = EventKernel()
    fired: list[float] = []

    async def main() -> tuple[float, float]:
        driver = RealtimeDriver(kernel, time_scale=10.0)
        driver.start()                      # empty heap: nothing armed
        await asyncio.sleep(0.1)            # about 1 virtual second
        stamped = driver.external(lambda: kernel.now())
        driver.external(lambda: kernel.call_later(0.5, lambda: fired.append(driver.now())))
        await asyncio.sleep(0.2)
        driver.stop()
        return stamped, driver.now()

    stamped, end = run(main())
    assert 0.9 <= stamped <= 3.0            # virtual time, not the kernel's 0.0
    assert len(fired) == 1 and fired[0] >= stamped + 0.5 - 0.02
    assert end > fired[0]


def test_a_slow_event_shows_as_lag() -> None:
    kernel = EventKernel()

    async def main() -> RealtimeDriver:
        driver = RealtimeDriver(kernel, time_scale=10.0)
        kernel.call_at(0.1, time.sleep, 0.08)        # blocks 0.8 virtual seconds
        kernel.call_at(0.2, lambda: None)            # is due while the first still runs
        driver.start()
        await asyncio.sleep(0.2)
        driver.stop()
        return driver

    driver = run(main())
    assert driver.lag.events == 2
    assert driver.lag.max_s >= 0.6
    assert driver.lag.late_events >= 1
    status = driver.status()
    assert status["lag_max_wall_s"] == pytest.approx(status["lag_max_s"] / 10)


def test_lag_stats_mean_and_max() -> None:
    s = LagStats(late_threshold_s=0.1)
    for lag in (0.0, 0.2, -0.01, 0.1):
        s.record(lag)
    assert s.events == 4 and s.max_s == 0.2 and s.late_events == 1
    assert s.mean_s == pytest.approx(0.075)


def test_bad_time_scale_is_refused_with_the_fix() -> None:
    with pytest.raises(ValueError, match="ten times"):
        RealtimeDriver(EventKernel(), time_scale=0)
    with pytest.raises(RuntimeError, match="start"):
        RealtimeDriver(EventKernel()).now()


def test_same_edge_same_event_times_simulated_or_emulated() -> None:
    """One kernel, two drivers: without outside input the emulated kernel runs the very
    events the simulator runs, at the same virtual times (registrations to the float)."""
    scenario = EdgeScenario(scheme="rice", nodes=2, seed=3)
    sim = Edge(scenario)
    sim.start()
    sim.kernel.run(until=45.0)
    sim_times = {i: app.registered_at for i, app in sim.nodes.items()}
    assert all(t is not None and t < 45.0 for t in sim_times.values())

    emu = Edge(scenario)

    async def main() -> None:
        driver = RealtimeDriver(emu.kernel, time_scale=60.0)
        emu.start()
        driver.start()
        while driver.now() < 45.0:
            await asyncio.sleep(0.02)
        driver.stop()

    run(main())
    assert {i: app.registered_at for i, app in emu.nodes.items()} == sim_times
    assert emu.registered() == ["/node1", "/node2"]
