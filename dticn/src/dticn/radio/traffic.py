"""Traffic models: when each node produces an item (registry by name).

A spec is ``"<model>:<interval>"``, e.g. ``periodic:600s`` (one item per interval with a
random phase per node) or ``poisson:60s`` (exponential gaps of that mean). Arrival times
are drawn as numpy arrays from the node's own generator, so the batched engine and the
event engine see exactly the same items.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dticn.radio.scenario import parse_duration

ArrivalModel = Callable[[float, float, np.random.Generator], np.ndarray]


def periodic(interval_s: float, horizon_s: float, rng: np.random.Generator) -> np.ndarray:
    phase = rng.uniform(0.0, interval_s)
    return np.arange(phase, horizon_s, interval_s)


def poisson(interval_s: float, horizon_s: float, rng: np.random.Generator) -> np.ndarray:
    expected = int(horizon_s / interval_s * 1.2 + 20)
    gaps = rng.exponential(interval_s, size=expected)
    times = np.cumsum(gaps)
    while times[-1] < horizon_s:
        more = np.cumsum(rng.exponential(interval_s, size=expected)) + times[-1]
        times = np.concatenate([times, more])
    return times[times < horizon_s]


TRAFFIC: dict[str, ArrivalModel] = {"periodic": periodic, "poisson": poisson}


def parse_traffic(spec: str) -> tuple[ArrivalModel, float]:
    """``"periodic:60s"`` -> (model, 60.0)."""
    name, _, interval = spec.partition(":")
    if name not in TRAFFIC or not interval:
        raise ValueError(f"traffic {spec!r}: write <model>:<interval> with model in "
                         f"{sorted(TRAFFIC)}, e.g. periodic:600s")
    return TRAFFIC[name], parse_duration(interval)


def arrivals(spec: str, horizon_s: float, rng: np.random.Generator) -> np.ndarray:
    model, interval = parse_traffic(spec)
    return model(interval, horizon_s, rng)
