"""The items of a radio run: when each node makes one, and what reached the gateway when.

Every engine (DSME's event and batched engines, LoRaWAN's) draws a node's arrival times
from the same generator (:func:`node_arrivals`), so the same scenario carries exactly the
same items on every MAC. :class:`ItemTraffic` feeds them to the MACs of an event engine in
time order through one kernel entry (one heap entry for all traffic keeps the heap small
as the node count grows) and books each delivery's latency from the item's number, which
travels in the first four payload bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from dticn.radio.scenario import Scenario
from dticn.radio.traffic import arrivals
from dticn.sim.kernel import EventKernel


def node_arrivals(s: Scenario, node: int) -> np.ndarray:
    """The node's item times, from its own generator (the same in every engine)."""
    return arrivals(s.traffic, s.duration_s, np.random.default_rng([s.seed, 31337, node]))


def item_payload(k: int, payload_bytes: int) -> bytes:
    """Item ``k``'s payload: its number in 4 bytes, padded to ``payload_bytes`` (>= 4)."""
    return (k.to_bytes(4, "big") + bytes(max(payload_bytes - 4, 0)))[: max(payload_bytes, 4)]


class ItemTraffic:
    """Arrivals of every node, handed out in time order, and their deliveries."""

    def __init__(self, s: Scenario, kernel: EventKernel, nodes: Iterable[int],
                 send: Callable[[int, bytes], Any]) -> None:
        self.s = s
        self.kernel = kernel
        self._send = send
        self.arrivals: dict[int, np.ndarray] = {}
        self.latencies: dict[int, list[float]] = {i: [] for i in nodes}

    def start(self) -> None:
        """Draw every node's arrivals and schedule the first item."""
        times, nodes, ks = [], [], []
        for i in self.latencies:
            arr = node_arrivals(self.s, i)
            self.arrivals[i] = arr
            times.append(arr)
            nodes.append(np.full(len(arr), i, dtype=np.int64))
            ks.append(np.arange(len(arr), dtype=np.int64))
        all_times = np.concatenate(times) if times else np.zeros(0)
        all_nodes = np.concatenate(nodes) if nodes else np.zeros(0, dtype=np.int64)
        order = np.lexsort((all_nodes, all_times))  # by time, then node
        self._time = all_times[order]
        self._node = all_nodes[order]
        self._k = (np.concatenate(ks) if ks else np.zeros(0, dtype=np.int64))[order]
        if len(order):
            self.kernel.call_at(float(self._time[0]), self._generate, 0)

    def _generate(self, index: int) -> None:
        node = int(self._node[index])
        self._send(node, item_payload(int(self._k[index]), self.s.payload_bytes))
        if index + 1 < len(self._time):
            self.kernel.call_at(float(self._time[index + 1]), self._generate, index + 1)

    def received(self, src: int, payload: bytes, at: float) -> bool:
        """Book an item that reached the gateway at ``at``; False for a frame that is not
        one of this run's items."""
        times = self.arrivals.get(src)
        if times is None or len(payload) < 4:
            return False
        k = int.from_bytes(payload[:4], "big")
        if k >= len(times):
            return False
        self.latencies[src].append(at - float(times[k]))
        return True


def run_in_chunks(kernel: EventKernel, horizon_s: float, chunk_s: float,
                  progress: Callable[[float], Any] | None) -> None:
    """Run ``kernel`` to ``horizon_s``, calling ``progress(fraction)`` every ``chunk_s``."""
    if progress is None:
        kernel.run(until=horizon_s)
        return
    t = 0.0
    while t < horizon_s:
        t = min(t + chunk_s, horizon_s)
        kernel.run(until=t)
        progress(t / horizon_s)
