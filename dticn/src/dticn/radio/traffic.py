"""Traffic models: when each node produces an item (registry by name).

A spec is ``"<model>:<interval>"``, e.g. ``periodic:600s`` (one item per interval with a
random phase per node), ``poisson:60s`` (exponential gaps of that mean) or
``uniform:50s..70s`` (gaps uniform in the range: the artifact's transaction timing). Arrival times
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


def uniform(low_s: float, high_s: float, horizon_s: float, rng: np.random.Generator
            ) -> np.ndarray:
    expected = int(horizon_s / low_s + 20)
    times = np.cumsum(rng.uniform(low_s, high_s, size=expected))
    return times[times < horizon_s]


TRAFFIC: dict[str, ArrivalModel] = {"periodic": periodic, "poisson": poisson}
RANGE_TRAFFIC = {"uniform": uniform}


def parse_traffic(spec: str) -> tuple[ArrivalModel, float]:
    """``"periodic:60s"`` -> (model, 60.0); ``"uniform:50s..70s"`` -> (model, 60.0 mean)."""
    name, _, interval = spec.partition(":")
    if name in RANGE_TRAFFIC and ".." in interval:
        low_text, _, high_text = interval.partition("..")
        low, high = parse_duration(low_text), parse_duration(high_text)
        if not 0 < low <= high:
            raise ValueError(f"traffic {spec!r}: need 0 < low <= high")
        model = RANGE_TRAFFIC[name]
        return (lambda _mean, horizon, rng: model(low, high, horizon, rng)), (low + high) / 2
    if name not in TRAFFIC or not interval:
        raise ValueError(f"traffic {spec!r}: write <model>:<interval> with model in "
                         f"{sorted(TRAFFIC)} (e.g. periodic:600s) or uniform:<low>..<high>")
    return TRAFFIC[name], parse_duration(interval)


def arrivals(spec: str, horizon_s: float, rng: np.random.Generator) -> np.ndarray:
    """Item times in ``[0, horizon_s)`` for one node."""
    model, interval = parse_traffic(spec)
    return model(interval, horizon_s, rng)
