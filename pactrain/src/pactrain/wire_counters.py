"""A worker's own wire bytes: the counters of its interface, read from inside its network
namespace (:func:`read_own_counters`), and bytes per step between two readings.

Worker-side and unprivileged: the training loop and the launcher use it, and it works (as
``None``) outside a namespace. Building the namespaces is root-only and lives apart, in
:mod:`pactrain.bench.netns`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

WORKER_IFNAME = "eth0"
"""The interface every worker namespace gets (its end of the shaped veth link)."""


@dataclass(frozen=True)
class LinkCounters:
    """Cumulative byte and packet counters of one worker's ``eth0``."""

    tx_bytes: int
    rx_bytes: int
    tx_packets: int
    rx_packets: int


#: Set by the launcher for workers it starts inside their own namespaces: the interface
#: whose counters are the worker's wire bytes.
WIRE_INTERFACE_ENV = "PACTRAIN_WIRE_INTERFACE"


def read_own_counters(ifname: str | None = None) -> LinkCounters | None:
    """Counters of ``ifname`` in the calling process's own namespace, or ``None``.

    Reads ``/proc/self/net/dev``, which is per network namespace, so a worker started with
    ``ip netns exec`` sees its own ``eth0``. Without ``ifname`` the interface comes from
    ``$PACTRAIN_WIRE_INTERFACE``; unset (a worker on the host's loopback) gives ``None``:
    the host's own NIC counts other traffic and would mean nothing.
    """
    ifname = ifname or os.environ.get(WIRE_INTERFACE_ENV)
    if not ifname:
        return None
    try:
        lines = Path("/proc/self/net/dev").read_text().splitlines()[2:]
    except OSError:
        return None
    for line in lines:
        name, _, rest = line.partition(":")
        if name.strip() == ifname:
            f = rest.split()
            return LinkCounters(
                rx_bytes=int(f[0]), rx_packets=int(f[1]), tx_bytes=int(f[8]), tx_packets=int(f[9])
            )
    return None


def wire_per_step(
    start: LinkCounters | None, end: LinkCounters | None, steps: int
) -> dict[str, float | None]:
    """Bytes this worker's ``eth0`` sent and received per step between two readings.

    ``None`` values when there is no ``eth0`` (an unthrottled run on loopback, where the
    counters would mix every process's traffic) or no step was timed.
    """
    if start is None or end is None or steps <= 0:
        return {"wire_tx_bytes_per_step": None, "wire_rx_bytes_per_step": None}
    return {
        "wire_tx_bytes_per_step": (end.tx_bytes - start.tx_bytes) / steps,
        "wire_rx_bytes_per_step": (end.rx_bytes - start.rx_bytes) / steps,
    }
