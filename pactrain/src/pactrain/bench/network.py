"""Where the workers of a bench run live: shaped namespaces, or loopback without root."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from pactrain.bench import netns


@dataclass
class BenchNetwork:
    """The per-rank command prefix and master address for one bandwidth.

    ``topology`` is ``None`` when the run is unthrottled on loopback; ``reason`` says why.
    """

    topology: netns.Topology | None
    reason: str = ""

    @property
    def throttled(self) -> bool:
        return self.topology is not None

    def shape(self, bandwidth: str | None) -> None:
        if self.topology is not None:
            self.topology.set_rate(bandwidth)

    @property
    def master_addr(self) -> str:
        return self.topology.address(0) if self.topology else "127.0.0.1"

    @property
    def prefix(self) -> Callable[[int], Sequence[str]] | None:
        return self.topology.exec_prefix if self.topology else None

    def label(self, bandwidth: str | None) -> str:
        if not self.throttled:
            return "loopback"
        return bandwidth or "unshaped"


def _raise_keyboard_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


@contextlib.contextmanager
def bench_network(workers: int, want_throttle: bool = True,
                  nodes: int = 1) -> Iterator[BenchNetwork]:
    """Build the topology (after removing stale ones), yield it, always tear it down.

    ``nodes`` > 1: the workers sit in that many nodes, and only each node's uplink is
    shaped (:class:`pactrain.bench.netns.Topology`).

    SIGTERM is turned into ``KeyboardInterrupt`` for the duration, so a killed bench
    unwinds through the same ``finally`` as Ctrl-C and a failure do.
    """
    ok, why = netns.can_build()
    if not want_throttle:
        ok, why = False, "--no-throttle was given"
    if not ok:
        yield BenchNetwork(None, why)
        return
    netns.clean_stale()
    previous = signal.signal(signal.SIGTERM, _raise_keyboard_interrupt)
    topology = netns.Topology(workers=workers, rate=None, nodes=nodes)
    try:
        topology.build()
        yield BenchNetwork(topology)
    finally:
        topology.teardown()
        signal.signal(signal.SIGTERM, previous)
