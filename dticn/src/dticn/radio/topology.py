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

    @classmethod
    def rings(cls, nodes: int, spacing_m: float, path_loss: LogDistancePathLoss, seed: int,
              *, sinks: int = 15, shadowing: bool = True) -> Topology:
        """DSME-LoRa's Fig. 22 simulation layout (inetrg/dsme_lora e94c7e5: INET
        StaticConcentricMobility, distance 10 m; ``nodes`` sources then ``sinks`` sinks):
        ``nodes + sinks`` hosts on concentric rings, and the gateway where the middle sink
        stands, so the sources lie as far from it as from their own sinks (all sinks share
        one arc of the outer ring). No node is placed again: far sources stay out of reach
        as often as the channel says, as in their simulation."""
        hosts = concentric_positions(nodes + sinks, spacing_m)
        positions = np.zeros((nodes + 1, 2))
        positions[0] = hosts[nodes + sinks // 2]
        positions[1:] = hosts[:nodes]
        return cls(positions, path_loss, seed, shadowing)


    @classmethod
    def rings_with_sinks(cls, nodes: int, spacing_m: float, path_loss: LogDistancePathLoss,
                         seed: int, *, sinks: int = 15, shadowing: bool = True) -> Topology:
        """DSME-LoRa's Fig. 22 layout with their sinks as receivers of their own
        (inetrg/dsme_lora e94c7e5, ``s_<N>_a_15_aps_1.ini``): hosts 0..N-1 are the sources,
        N..N+14 the sinks, host 0 also the PAN coordinator (beacon source) at the centre.
        Ours: address 0 the coordinator at the centre, 1..N the sources on hosts 0..N-1
        (source 1 shares the centre with it), N+1..N+``sinks`` the sinks."""
        hosts = concentric_positions(nodes + sinks, spacing_m)
        positions = np.zeros((nodes + sinks + 1, 2))
        positions[1:] = hosts
        return cls(positions, path_loss, seed, shadowing)


def concentric_positions(hosts: int, spacing_m: float) -> np.ndarray:
    """INET's StaticConcentricMobility: host 0 at the centre, ring k (radius k x spacing)
    holding floor(2 pi k) hosts, filled in index order."""
    pos = np.zeros((hosts, 2))
    ring, inner, on_ring = 0, 0, 1
    for i in range(hosts):
        if i - inner >= on_ring:
            ring += 1
            inner += on_ring
            on_ring = int(2 * math.pi * ring)
        if i:
            angle = 2 * math.pi / on_ring * (i - inner)
            pos[i] = (spacing_m * ring * math.cos(angle), spacing_m * ring * math.sin(angle))
    return pos

