"""Node placement and link losses (seeded, reproducible, symmetric).

Nodes are placed uniformly in a disc around the gateway (address 0); a node whose link
to the gateway would lie below sensitivity is placed again (up to 100 draws), so every
simulated node can reach the gateway, as in a deployment that was planned. Shadowing is
drawn once per link from a generator seeded by (seed, a, b), so adding a node does not
change the others' links.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dticn.phy.propagation import LogDistancePathLoss

GATEWAY = 0


@dataclass
class Topology:
    positions: np.ndarray          # (n + 1, 2) metres; row 0 is the gateway
    path_loss: LogDistancePathLoss
    seed: int
    shadowing: bool = True

    def __post_init__(self) -> None:
        self._cache: dict[tuple[int, int], float] = {}
        self._draw: dict[int, int] = {}    # placement attempt per node (new shadowing)

    def loss_db(self, a: int, b: int) -> float:
        key = (a, b) if a < b else (b, a)
        cached = self._cache.get(key)
        if cached is None:
            d = float(np.hypot(*(self.positions[a] - self.positions[b])))
            cached = self.path_loss.mean_loss_db(d)
            if self.shadowing and self.path_loss.shadowing_sigma_db:
                rng = np.random.default_rng([self.seed, 7919, key[0], key[1],
                                             self._draw.get(key[0], 0),
                                             self._draw.get(key[1], 0)])
                cached += float(rng.normal(0.0, self.path_loss.shadowing_sigma_db))
            self._cache[key] = cached
        return cached

    @classmethod
    def disc(cls, nodes: int, radius_m: float, path_loss: LogDistancePathLoss, seed: int,
             *, max_loss_db: float, shadowing: bool = True) -> Topology:
        """``nodes`` nodes in a disc, each with gateway loss <= ``max_loss_db``."""
        rng = np.random.default_rng([seed, 104729])
        positions = np.zeros((nodes + 1, 2))
        topo = cls(positions, path_loss, seed, shadowing)
        for i in range(1, nodes + 1):
            for attempt in range(100):
                topo._draw[i] = attempt
                r = radius_m * math.sqrt(rng.uniform())
                phi = rng.uniform(0, 2 * math.pi)
                positions[i] = (r * math.cos(phi), r * math.sin(phi))
                topo._cache.pop((0, i), None)
                if topo.loss_db(GATEWAY, i) <= max_loss_db:
                    break
            else:
                raise ValueError(
                    f"could not place node {i} within reach of the gateway in a {radius_m} m "
                    "disc; reduce radius_m, raise tx power or SF, or switch shadowing off"
                )
        return topo
