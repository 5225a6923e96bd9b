"""The throttled namespace topology: create, shape, measure, tear down, recover from stale."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from pactrain import rates
from pactrain.bench import netns
from pactrain.bench.netns import Topology

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")


def test_parse_and_format_rate() -> None:
    assert rates.parse_rate("10mbit") == 10_000_000
    assert rates.parse_rate("1gbit") == 1_000_000_000
    assert rates.parse_rate("1.5Mbit") == 1_500_000
    assert rates.format_rate(100_000_000) == "100mbit"
    with pytest.raises(ValueError, match="write it like 10mbit"):
        rates.parse_rate("fast")


def test_burst_is_large_enough_for_the_rate() -> None:
    assert rates.tbf_burst_bytes(1_000_000_000) >= 256_000
    assert rates.tbf_burst_bytes(10_000_000) == 32 * 1024


def test_refuses_nonsense_worker_counts() -> None:
    with pytest.raises(ValueError, match="workers must be"):
        Topology(workers=0)


def _root_links() -> set[str]:
    out = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    return {line.split(":")[1].strip().split("@")[0] for line in out.splitlines()}


@pytest.mark.root
@needs_root
def test_create_shape_and_tear_down() -> None:
    before = _root_links()
    topo = Topology(workers=3, rate="50mbit")
    with topo:
        present = set(netns.list_namespaces())
        assert set(topo.namespaces()) <= present
        assert sorted(topo.links(topo.hub)) == ["br0", "h0", "h1", "h2", "lo"]
        for rank in range(3):
            ns = topo.namespace(rank)
            assert sorted(topo.links(ns)) == ["eth0", "lo"]
            assert "tbf" in topo.qdisc(ns, "eth0") and "50Mbit" in topo.qdisc(ns, "eth0")
            assert "tbf" in topo.qdisc(topo.hub, f"h{rank}")
            routes = subprocess.run(["ip", "-n", ns, "route"], capture_output=True,
                                    text=True).stdout
            assert routes.strip().startswith("10.77.0.0/24") and "default" not in routes
        # Nothing was added to the root namespace: the hub has no link to it.
        assert _root_links() == before
        topo.set_rate("1gbit")
        assert "1Gbit" in topo.qdisc(topo.namespace(2), "eth0")
        assert "1Gbit" in topo.qdisc(topo.hub, "h2")
        topo.set_rate(None)
        assert "tbf" not in topo.qdisc(topo.namespace(2), "eth0")
    assert not set(topo.namespaces()) & set(netns.list_namespaces())


@pytest.mark.root
@needs_root
def test_teardown_on_failure_inside_the_block() -> None:
    topo = Topology(workers=2, rate=None)
    with pytest.raises(RuntimeError, match="boom"), topo:
        assert topo.hub in netns.list_namespaces()
        raise RuntimeError("boom")
    assert not set(topo.namespaces()) & set(netns.list_namespaces())


_RECEIVER = textwrap.dedent("""
    import socket, sys, time
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", 29500)); s.listen(1); print("ready", flush=True)
    c, _ = s.accept(); n = 0; t0 = None
    while True:
        b = c.recv(1 << 16)
        if not b: break
        if t0 is None: t0 = time.perf_counter()
        n += len(b)
    print(n, time.perf_counter() - t0, flush=True)
""")

_SENDER = textwrap.dedent("""
    import socket, sys
    s = socket.create_connection((sys.argv[1], 29500)); s.sendall(b"x" * int(sys.argv[2]))
    s.close()
""")


@pytest.mark.root
@needs_root
@pytest.mark.slow
def test_link_is_shaped_and_counters_measure_the_bytes() -> None:
    rate = 20_000_000
    nbytes = 3_000_000  # 1.2 s at 20 Mbit/s
    with Topology(workers=2, rate="20mbit") as topo:
        before = topo.counters(0)
        recv = subprocess.Popen([*topo.exec_prefix(1), sys.executable, "-c", _RECEIVER],
                                stdout=subprocess.PIPE, text=True)
        assert recv.stdout is not None and recv.stdout.readline().strip() == "ready"
        subprocess.run([*topo.exec_prefix(0), sys.executable, "-c", _SENDER,
                        topo.address(1), str(nbytes)], check=True)
        got, seconds = recv.stdout.readline().split()
        recv.wait(timeout=30)
        after = topo.counters(0)
        assert int(got) == nbytes
        throughput = nbytes * 8 / float(seconds)
        assert 0.6 * rate < throughput < 1.15 * rate, throughput
        sent = after.tx_bytes - before.tx_bytes
        # Payload plus TCP/IP/Ethernet headers (~3-5%).
        assert nbytes <= sent < 1.1 * nbytes


@pytest.mark.root
@needs_root
def test_address_exists_only_inside_the_namespace() -> None:
    with Topology(workers=1, rate=None) as topo:
        root_addrs = subprocess.run(["ip", "-o", "addr"], capture_output=True, text=True).stdout
        assert topo.address(0) not in root_addrs
        inside = subprocess.run(["ip", "-n", topo.namespace(0), "-o", "addr"],
                                capture_output=True, text=True).stdout
        assert topo.address(0) in inside


_CRASHER = textwrap.dedent("""
    import sys, time
    from pactrain.bench.netns import Topology
    topo = Topology(workers=2, rate="10mbit").build()
    print(topo.hub, flush=True)
    time.sleep(60)
""")


@pytest.mark.root
@needs_root
def test_stale_topology_of_a_killed_run_is_detected_and_cleaned() -> None:
    proc = subprocess.Popen([sys.executable, "-c", _CRASHER], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        hub = proc.stdout.readline().strip()
        assert hub in netns.list_namespaces()
        assert hub not in netns.stale_namespaces()  # its owner is alive: not stale
    finally:
        os.kill(proc.pid, signal.SIGKILL)  # no atexit: the topology is left behind
        proc.wait()
    time.sleep(0.1)
    stale = netns.stale_namespaces()
    assert hub in stale and len([n for n in stale if n.startswith(hub[:-3])]) == 3
    removed = netns.clean_stale()
    assert hub in removed
    assert not [n for n in netns.list_namespaces() if n.startswith(hub[:-3])]


def _transfer(topo: Topology, sender: int, receiver: int, nbytes: int) -> float:
    """Send ``nbytes`` over TCP from ``sender`` to ``receiver``; the receiver's bits/s."""
    recv = subprocess.Popen([*topo.exec_prefix(receiver), sys.executable, "-c", _RECEIVER],
                            stdout=subprocess.PIPE, text=True)
    assert recv.stdout is not None and recv.stdout.readline().strip() == "ready"
    subprocess.run([*topo.exec_prefix(sender), sys.executable, "-c", _SENDER,
                    topo.address(receiver), str(nbytes)], check=True)
    got, seconds = recv.stdout.readline().split()
    recv.wait(timeout=30)
    assert int(got) == nbytes
    return nbytes * 8 / float(seconds)


@pytest.mark.root
@needs_root
@pytest.mark.slow
def test_two_level_topology_shapes_only_the_uplinks() -> None:
    rate = 20_000_000
    with Topology(workers=4, rate="20mbit", nodes=2) as topo:
        assert [topo.node_of(r) for r in range(4)] == [0, 0, 1, 1]
        assert len(topo.namespaces()) == 1 + 2 + 4
        before = topo.uplink_counters(0)
        inside = _transfer(topo, 0, 1, 3_000_000)
        between_inside = topo.uplink_counters(0).tx_bytes - before.tx_bytes
        across = _transfer(topo, 0, 2, 3_000_000)
        uplink = topo.uplink_counters(0).tx_bytes - before.tx_bytes - between_inside
        assert inside > 5 * rate, inside  # the node's own bridge is not shaped
        assert 0.6 * rate < across < 1.15 * rate, across
        assert between_inside < 100_000  # a node-internal transfer stays off the uplink
        assert 3_000_000 <= uplink < 1.1 * 3_000_000
        assert "tbf" in topo.qdisc(topo.node_namespace(0), "up0")
        assert "tbf" not in topo.qdisc(topo.namespace(0), "eth0")
    assert not any(ns.startswith(f"{netns.PREFIX}{topo.run_id}") for ns in
                   netns.list_namespaces())
