"""Sweep grids beyond the paper: nodes per gateway, production/request patterns, RTTs,
spreading factors, loss, the MAC (DSME or LoRaWAN class A). A grid is the Cartesian
product of per-axis value lists; each grid point runs over several seeds and is aggregated
like a reproduce row."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from dticn.experiments.params import Experiment

AXES = ("config", "nodes", "interval", "pattern", "delay", "sf", "loss", "mac")
DEFAULTS = {"mac": ["dsme"]}
"""Axes a grid may leave out (the paper's DSME edge)."""


def parse_interval(text: str) -> tuple[float, float]:
    """``"50:70"`` -> (50, 70) seconds; ``"600"`` -> (600, 600)."""
    low, _, high = text.partition(":")
    try:
        lo = float(low)
        hi = float(high) if high else lo
    except ValueError:
        raise ValueError(
            f"interval {text!r}: write seconds as LOW:HIGH or MEAN, e.g. 50:70") from None
    return lo, hi


def parse_delay(text: str) -> tuple[float, float]:
    """``"20"`` -> both Internet links 20 ms; ``"20:300"`` -> consumer side 20 ms, gateway
    side 300 ms (differing RTTs). Returned in seconds."""
    a, _, b = text.partition(":")
    try:
        first = float(a) / 1000.0
        second = float(b) / 1000.0 if b else first
    except ValueError:
        raise ValueError(
            f"delay {text!r}: write milliseconds as MS or MS:MS, e.g. 20:300") from None
    return first, second


@dataclass(frozen=True)
class GridPoint:
    """One combination of axis values (as given on the command line)."""

    config: str
    nodes: int
    interval: str
    pattern: str
    delay: str
    sf: int
    loss: float
    mac: str = "dsme"

    def experiment(self, seed: int, duration_s: float) -> Experiment:
        return Experiment(config=self.config, seed=seed, duration_s=duration_s,
                          nodes=self.nodes, interval_s=parse_interval(self.interval),
                          pattern=self.pattern, delays_s=parse_delay(self.delay), sf=self.sf,
                          loss=self.loss, mac=self.mac)

    def label(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in AXES}


def grid(axes: dict[str, list[Any]]) -> list[GridPoint]:
    """Every combination, in axis order (stable, so results line up with the grid); an
    axis of :data:`DEFAULTS` left out takes its default."""
    axes = {**DEFAULTS, **axes}
    missing = [a for a in AXES if a not in axes]
    if missing:
        raise ValueError(f"grid needs values for every axis; missing {missing}")
    return [GridPoint(*values) for values in itertools.product(*(axes[a] for a in AXES))]
