"""A real throttled network for the workers: one Linux network namespace per worker.

Why: compression only pays when bandwidth is short, and a simulated link hides what a
real one costs (TCP, framing, gloo's own traffic). So each worker process runs inside its
own network namespace, and every byte it exchanges crosses a shaped veth link.

Topology (``N`` workers, run id ``R``)::

    ns ptnet-R-w0   eth0 10.77.0.1/24 --veth-- h0 \\
    ns ptnet-R-w1   eth0 10.77.0.2/24 --veth-- h1  >-- br0 (ns ptnet-R-hub)
    ...                                            /
    ns ptnet-R-wN-1 eth0 10.77.0.N/24 --veth-- hN-1

Two-level (``nodes`` > 1: the workers of a node share one uplink)::

    ns ...-w0  eth0 --veth-- h0 \\
    ns ...-w1  eth0 --veth-- h1  >-- br0 (ns ...-n0) up0 ==shaped== u0 \\
                                                                     >-- br0 (ns ...-hub)
    ns ...-w2  eth0 --veth-- h2 \\                                  /
    ns ...-w3  eth0 --veth-- h3  >-- br0 (ns ...-n1) up1 ==shaped== u1

  Inside a node the links are unshaped veth (the fast bus); only the node's uplink is
  shaped, both ways, and every byte between nodes of all its workers shares it. Workers
  are numbered node by node (ranks ``k x W/nodes`` to ``(k+1) x W/nodes - 1`` on node
  ``k``), as torchrun numbers them.
* The hub namespace holds only the bridge and the hub ends of the veth pairs; it has no
  link to the root namespace, and the addresses exist only inside the worker namespaces,
  so nothing of this leaks into the host's network.
* ``tc tbf`` shapes both directions of each worker link: the worker's ``eth0`` egress
  (worker -> hub) and the hub's ``h<k>`` egress (hub -> worker). The token bucket's burst
  grows with the rate (at least 256 KB at 1 Gbit/s) so the shaper does not cap below it.
* Delay is not emulated: ``sch_netem`` is not available in this kernel, so the links
  have bandwidth limits but the latency of veth (microseconds).
* Bytes on the wire are read from the interface counters of each worker's ``eth0``
  (:meth:`Topology.counters`), or, from inside a worker, with
  :func:`pactrain.wire_counters.read_own_counters` (rates: :mod:`pactrain.rates`).

Namespaces are named ``ptnet-<pid>-<tag>-...`` with the pid of the process that made them,
so :func:`clean_stale` can recognise and remove the leftovers of a crashed run (its pid is
gone) without touching a live run's. :class:`Topology` is a context manager, and also
tears down at interpreter exit; the bench turns SIGTERM into an exception so the same
``finally`` runs on Ctrl-C, on kill and on failure.

Needs root (``ip netns``). Without it, :func:`can_build` says why and callers run
unthrottled on loopback.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import secrets
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pactrain.rates import parse_rate, tbf_burst_bytes
from pactrain.wire_counters import WORKER_IFNAME, LinkCounters

PREFIX = "ptnet-"
BRIDGE = "br0"
_NAME_RE = re.compile(rf"^{PREFIX}(\d+)-([0-9a-f]+)-(hub|w\d+|n\d+)$")


class NetnsError(RuntimeError):
    """A namespace, link or qdisc could not be built; the message says which command and why."""


def can_build() -> tuple[bool, str]:
    """Whether this process can build namespaces; the reason when it cannot."""
    if os.geteuid() != 0:
        return False, "not root: network namespaces and tc need root"
    for tool in ("ip", "tc"):
        if not any((Path(d) / tool).exists() for d in os.environ.get("PATH", "").split(":")):
            return False, f"the {tool!r} command (iproute2) is not on PATH"
    return True, ""


def _run(argv: Sequence[str], check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(list(argv), capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise NetnsError(
            f"`{' '.join(argv)}` failed ({done.returncode}): {done.stderr.strip()}; "
            "run as root with iproute2 installed, and remove leftovers with "
            "`pactrain bench --clean-stale`"
        )
    return done


def list_namespaces() -> list[str]:
    """Names of all network namespaces known to ``ip netns``."""
    out = _run(["ip", "netns", "list"], check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _delete_namespace(name: str) -> None:
    """Kill what still runs inside ``name`` (only our workers ever do), then delete it."""
    pids = _run(["ip", "netns", "pids", name], check=False).stdout.split()
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pid), 9)
    _run(["ip", "netns", "del", name], check=False)


def stale_namespaces() -> list[str]:
    """Our namespaces whose creating process no longer exists (a crashed or killed run)."""
    stale = []
    for name in list_namespaces():
        match = _NAME_RE.match(name)
        if match and not _pid_alive(int(match.group(1))):
            stale.append(name)
    return stale


def clean_stale() -> list[str]:
    """Remove every stale namespace of ours; returns the names removed."""
    removed = stale_namespaces()
    for name in removed:
        _delete_namespace(name)
    return removed


@dataclass
class Topology:
    """``workers`` namespaces on one shaped bridge; use as a context manager.

    Example::

        with Topology(workers=4, rate="100mbit") as topo:
            subprocess.run(topo.exec_prefix(0) + ["python", "-c", "..."])
            print(topo.address(0), topo.counters(0).tx_bytes)
    """

    workers: int
    rate: str | None = "100mbit"
    subnet: str = "10.77.0"
    nodes: int = 1
    tag: str = field(default_factory=lambda: secrets.token_hex(2))
    _built: bool = field(default=False, init=False, repr=False)

    def __post_init__(self) -> None:
        if not 1 <= self.workers <= 250:
            raise ValueError(f"workers must be 1..250 (one /24 subnet), got {self.workers}")
        if self.nodes < 1 or self.workers % self.nodes:
            raise ValueError(f"{self.workers} workers do not split into {self.nodes} nodes "
                             "of equal size")
        self.rate_bits = parse_rate(self.rate) if self.rate else None
        self.run_id = f"{os.getpid()}-{self.tag}"

    # names -------------------------------------------------------------------------------
    @property
    def hub(self) -> str:
        return f"{PREFIX}{self.run_id}-hub"

    def namespace(self, rank: int) -> str:
        return f"{PREFIX}{self.run_id}-w{rank}"

    def node_namespace(self, node: int) -> str:
        """The namespace of node ``node``'s bridge (two-level topologies only)."""
        return f"{PREFIX}{self.run_id}-n{node}"

    @property
    def workers_per_node(self) -> int:
        return self.workers // self.nodes

    def node_of(self, rank: int) -> int:
        return rank // self.workers_per_node

    def shaped_ends(self) -> list[tuple[str, str]]:
        """(namespace, device) of every shaped link end: each worker's link both ways, or
        with nodes, each node's uplink both ways."""
        if self.nodes > 1:
            return [end for node in range(self.nodes)
                    for end in ((self.node_namespace(node), f"up{node}"), (self.hub, f"u{node}"))]
        return [end for rank in range(self.workers)
                for end in ((self.namespace(rank), WORKER_IFNAME), (self.hub, f"h{rank}"))]

    def address(self, rank: int) -> str:
        """IPv4 address of ``rank``'s ``eth0`` (exists only inside its namespace)."""
        return f"{self.subnet}.{rank + 1}"

    def namespaces(self) -> list[str]:
        nodes = [self.node_namespace(k) for k in range(self.nodes)] if self.nodes > 1 else []
        return [self.hub, *nodes] + [self.namespace(k) for k in range(self.workers)]

    def exec_prefix(self, rank: int) -> list[str]:
        """argv prefix that runs a command as ``rank`` inside its namespace.

        ``GLOO_SOCKET_IFNAME`` pins gloo to the shaped ``eth0``: otherwise gloo resolves
        the host name, whose address does not exist in the namespace.
        """
        return [
            "ip", "netns", "exec", self.namespace(rank),
            "env", f"GLOO_SOCKET_IFNAME={WORKER_IFNAME}",
        ]

    # life cycle ----------------------------------------------------------------------------
    def build(self) -> Topology:
        """Create namespaces, veth pairs, the bridge and the shapers; undo all on failure."""
        ok, why = can_build()
        if not ok:
            raise NetnsError(f"cannot build a throttled network: {why}")
        atexit.register(self.teardown)
        self._built = True
        try:
            self._build()
        except BaseException:
            self.teardown()
            raise
        return self

    def _build(self) -> None:
        hub = self.hub
        _run(["ip", "netns", "add", hub])
        _run(["ip", "-n", hub, "link", "set", "lo", "up"])
        _run(["ip", "-n", hub, "link", "add", BRIDGE, "type", "bridge"])
        _run(["ip", "-n", hub, "link", "set", BRIDGE, "up"])
        for node in range(self.nodes if self.nodes > 1 else 0):
            bridge_ns = self.node_namespace(node)
            _run(["ip", "netns", "add", bridge_ns])
            _run(["ip", "-n", bridge_ns, "link", "set", "lo", "up"])
            _run(["ip", "-n", bridge_ns, "link", "add", BRIDGE, "type", "bridge"])
            _run(["ip", "-n", bridge_ns, "link", "set", BRIDGE, "up"])
            _run(["ip", "-n", bridge_ns, "link", "add", f"up{node}", "type", "veth",
                  "peer", "name", f"u{node}", "netns", hub])
            for ns, dev in ((bridge_ns, f"up{node}"), (hub, f"u{node}")):
                _run(["ip", "-n", ns, "link", "set", dev, "master", BRIDGE])
                _run(["ip", "-n", ns, "link", "set", dev, "up"])
        for rank in range(self.workers):
            ns, hub_end = self.namespace(rank), f"h{rank}"
            bridge_ns = self.node_namespace(self.node_of(rank)) if self.nodes > 1 else hub
            _run(["ip", "netns", "add", ns])
            _run(["ip", "-n", ns, "link", "set", "lo", "up"])
            # Both ends are born inside the namespaces: nothing passes through the root one.
            _run(["ip", "-n", ns, "link", "add", WORKER_IFNAME, "type", "veth",
                  "peer", "name", hub_end, "netns", bridge_ns])
            _run(["ip", "-n", ns, "addr", "add", f"{self.address(rank)}/24",
                  "dev", WORKER_IFNAME])
            _run(["ip", "-n", ns, "link", "set", WORKER_IFNAME, "up"])
            _run(["ip", "-n", bridge_ns, "link", "set", hub_end, "master", BRIDGE])
            _run(["ip", "-n", bridge_ns, "link", "set", hub_end, "up"])
        if self.rate_bits is not None:
            for ns, dev in self.shaped_ends():
                self._shape(ns, dev)
        self._wait_links_up()

    def _wait_links_up(self, timeout_s: float = 10.0) -> None:
        """Block until every veth end reports operstate UP.

        Why: the kernel turns a veth's carrier on asynchronously (linkwatch, up to about
        1 s); until then the device drops what is sent, and a worker that starts at once can
        lose its first rendezvous packets.
        """
        ends = [(self.namespace(r), WORKER_IFNAME) for r in range(self.workers)]
        ends += [(self.node_namespace(self.node_of(r)) if self.nodes > 1 else self.hub,
                  f"h{r}") for r in range(self.workers)]
        if self.nodes > 1:
            ends += self.shaped_ends()
        deadline = time.monotonic() + timeout_s
        while True:
            down = [f"{ns}/{dev}" for ns, dev in ends
                    if "state UP" not in _run(["ip", "-n", ns, "-o", "link", "show", dev]).stdout]
            if not down:
                return
            if time.monotonic() > deadline:
                raise NetnsError(f"links still down after {timeout_s:.0f} s: {', '.join(down)}; "
                                 "check `ip -n NS link` and that veth is supported here")
            time.sleep(0.05)

    def set_rate(self, rate: str | None) -> None:
        """Reshape every link of a built topology to ``rate`` (``None``: unshaped)."""
        self.rate = rate
        self.rate_bits = parse_rate(rate) if rate else None
        for ns, dev in self.shaped_ends():
            if self.rate_bits is None:
                _run(["tc", "-n", ns, "qdisc", "del", "dev", dev, "root"], check=False)
            else:
                self._shape(ns, dev)

    def _shape(self, ns: str, dev: str) -> None:
        assert self.rate_bits is not None
        burst = tbf_burst_bytes(self.rate_bits)
        # Queue of ~100 ms at the rate (plus the burst): deep enough that TCP does not
        # lose packets at the shaper, short enough not to hide the limit.
        limit = burst + max(64 * 1024, self.rate_bits // 8 // 10)
        _run(["tc", "-n", ns, "qdisc", "replace", "dev", dev, "root", "tbf",
              "rate", f"{self.rate_bits}bit", "burst", str(burst), "limit", str(limit)])

    def teardown(self) -> None:
        """Remove every namespace of this run (idempotent; also called at exit)."""
        if not self._built:
            return
        self._built = False
        present = set(list_namespaces())
        for ns in reversed(self.namespaces()):
            if ns in present:
                _delete_namespace(ns)
        with contextlib.suppress(Exception):
            atexit.unregister(self.teardown)

    def __enter__(self) -> Topology:
        return self.build()

    def __exit__(self, *exc: object) -> None:
        self.teardown()

    # inspection ----------------------------------------------------------------------------
    def counters(self, rank: int) -> LinkCounters:
        """Cumulative counters of ``rank``'s ``eth0``, read from outside its namespace."""
        return self._counters(self.namespace(rank), WORKER_IFNAME)

    def _counters(self, ns: str, dev: str) -> LinkCounters:
        out = _run(["ip", "-j", "-s", "-n", ns, "link", "show", "dev", dev]).stdout
        stats = json.loads(out)[0]["stats64"]
        return LinkCounters(
            tx_bytes=int(stats["tx"]["bytes"]), rx_bytes=int(stats["rx"]["bytes"]),
            tx_packets=int(stats["tx"]["packets"]), rx_packets=int(stats["rx"]["packets"]),
        )

    def uplink_counters(self, node: int) -> LinkCounters:
        """Cumulative counters of node ``node``'s uplink, node side (tx: node -> others)."""
        return self._counters(self.node_namespace(node), f"up{node}")

    def links(self, ns: str) -> list[str]:
        """Interface names inside namespace ``ns``."""
        out = _run(["ip", "-j", "-n", ns, "link", "show"]).stdout
        return [entry["ifname"] for entry in json.loads(out)]

    def qdisc(self, ns: str, dev: str) -> str:
        """``tc qdisc show`` of ``dev`` in ``ns`` (for checks and the bench's environment)."""
        return _run(["tc", "-n", ns, "qdisc", "show", "dev", dev]).stdout.strip()


