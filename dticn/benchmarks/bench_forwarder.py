"""Interest/Data exchanges per second: the sans-IO core alone, and over real sockets.

1. Core alone: one forwarder on the EventKernel, a consumer and a producer
   RecordingFace; each exchange is one Interest in (decode, PIT insert, CS miss, FIB
   lookup, out-record, send) and one Data in (decode, PIT match, CS insert with LRU
   eviction, send). Distinct names, so every exchange misses the cache.
2. Real sockets: ``dticn forwarder`` as a separate process; a raw TLV producer on TCP
   (registered through ``/localhost/nfd/rib/register``) and a raw consumer on the Unix
   socket keeping a window of Interests outstanding, both in this process.

Run: ``python dticn/benchmarks/bench_forwarder.py [--exchanges N] [--window W]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time

from dticn.forwarder.face import RecordingFace
from dticn.forwarder.forwarder import Forwarder, ForwarderConfig
from dticn.mgmt.nfd import ControlParameters
from dticn.packets import Data, Interest, decode_interest, name_from_str
from dticn.sim.kernel import EventKernel


def bench_core(n: int, repeats: int = 3) -> dict[str, float]:
    """Exchanges per second through the core alone (no sockets, no logging).

    Best of ``repeats`` runs, by wall time and by this process's CPU time: the machine
    is shared, and CPU time is what "per core" means.
    """
    runs = [_core_once(n) for _ in range(repeats)]
    wall = min(r[0] for r in runs)
    cpu = min(r[1] for r in runs)
    return {
        "exchanges_per_s": n / wall,
        "exchanges_per_cpu_s": n / cpu,
        "us_per_exchange_cpu": cpu / n * 1e6,
        "us_per_packet_cpu": cpu / (2 * n) * 1e6,
    }


def _core_once(n: int) -> tuple[float, float]:
    kernel = EventKernel()
    fw = Forwarder(kernel, ForwarderConfig(cs_capacity=1000))
    consumer, producer = RecordingFace(), RecordingFace()
    fw.add_face(consumer)
    fw.add_face(producer)
    fw.add_route(name_from_str("/bench"), producer.face_id)
    interests = [
        Interest(name_from_str(f"/bench/item/{k}"), nonce=k, lifetime_ms=4000).encode()
        for k in range(n)
    ]
    datas = [Data(name_from_str(f"/bench/item/{k}"), b"x" * 32).encode() for k in range(n)]
    t0, c0 = time.perf_counter(), time.process_time()
    for k in range(n):
        consumer.deliver(interests[k])
        producer.sent.clear()
        producer.deliver(datas[k])
        consumer.sent.clear()
    dt, dc = time.perf_counter() - t0, time.process_time() - c0
    assert fw.counters.satisfied_interests == n, fw.counters
    return dt, dc


def _cpu_seconds(pid: int) -> float | None:
    """utime + stime of a process from /proc (Linux); None elsewhere."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def _read_tlv_frames(buf: bytearray) -> list[bytes]:
    frames = []
    pos = 0
    while True:
        if len(buf) - pos < 2:
            break
        p = pos + 1 if buf[pos] < 0xFD else pos + 3
        if len(buf) < p + 1:
            break
        first = buf[p]
        if first < 0xFD:
            length, hdr_end = first, p + 1
        elif first == 0xFD:
            if len(buf) < p + 3:
                break
            length, hdr_end = int.from_bytes(buf[p + 1 : p + 3], "big"), p + 3
        else:
            raise ValueError("frame too large for this benchmark")
        if len(buf) < hdr_end + length:
            break
        frames.append(bytes(buf[pos : hdr_end + length]))
        pos = hdr_end + length
    del buf[:pos]
    return frames


async def _producer(host: str, port: int, registered: asyncio.Event) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    cp = ControlParameters(name=name_from_str("/bench")).encode()
    comp = b"\x08" + bytes((len(cp),)) + cp
    reg_name = (*name_from_str("/localhost/nfd/rib/register"), comp)
    writer.write(Interest(reg_name, nonce=1, lifetime_ms=1000).encode())
    buf = bytearray()
    payload = b"x" * 32
    while True:
        chunk = await reader.read(65536)
        if not chunk:
            return
        buf += chunk
        out = []
        for frame in _read_tlv_frames(buf):
            if frame[0] == 0x06:
                registered.set()
                continue
            if frame[0] != 0x05:
                continue
            out.append(Data(decode_interest(frame).name, payload).encode())
        if out:
            writer.write(b"".join(out))


async def _consumer(path: str, n: int, window: int) -> float:
    reader, writer = await asyncio.open_unix_connection(path)
    interests = [
        Interest(name_from_str(f"/bench/s/{k}"), nonce=k + 7, lifetime_ms=4000).encode()
        for k in range(n)
    ]
    sent = min(window, n)
    writer.write(b"".join(interests[:sent]))
    received = 0
    buf = bytearray()
    t0 = time.perf_counter()
    while received < n:
        chunk = await asyncio.wait_for(reader.read(65536), 20)
        if not chunk:
            raise RuntimeError("forwarder closed the consumer connection")
        buf += chunk
        frames = _read_tlv_frames(buf)
        received += sum(1 for f in frames if f[0] == 0x06)
        more = min(n, received + window) - sent
        if more > 0:
            writer.write(b"".join(interests[sent : sent + more]))
            sent += more
    dt = time.perf_counter() - t0
    writer.close()
    return n / dt


async def _bench_sockets(n: int, window: int) -> tuple[float, float | None]:
    with tempfile.TemporaryDirectory() as tmp:
        sock = os.path.join(tmp, "fw.sock")
        proc = subprocess.Popen(
            [sys.executable, "-m", "dticn.cli", "forwarder", "--listen", "tcp://127.0.0.1:0",
             "--listen", f"unix://{sock}", "--log-level", "warning",
             "--cs-capacity", "1000"],
            stdout=subprocess.PIPE, text=True,
        )
        try:
            assert proc.stdout is not None
            tcp = proc.stdout.readline().split()[1]
            proc.stdout.readline()
            proc.stdout.readline()
            host, port = tcp.removeprefix("tcp://").rsplit(":", 1)
            registered = asyncio.Event()
            prod = asyncio.create_task(_producer(host, int(port), registered))
            await asyncio.wait_for(registered.wait(), 10)
            cpu0 = _cpu_seconds(proc.pid)
            rate = await _consumer(sock, n, window)
            cpu1 = _cpu_seconds(proc.pid)
            prod.cancel()
            per_cpu = n / (cpu1 - cpu0) if cpu0 is not None and cpu1 is not None and (
                cpu1 > cpu0) else None
            return rate, per_cpu
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exchanges", type=int, default=20_000)
    ap.add_argument("--window", type=int, default=64)
    args = ap.parse_args()
    core = bench_core(args.exchanges)
    print(
        f"core alone: {core['exchanges_per_s']:,.0f} exchanges/s wall, "
        f"{core['exchanges_per_cpu_s']:,.0f} per CPU-second "
        f"({core['us_per_exchange_cpu']:.1f} us CPU/exchange, "
        f"{core['us_per_packet_cpu']:.1f} us CPU/packet)"
    )
    rate, per_cpu = asyncio.run(_bench_sockets(args.exchanges, args.window))
    cpu_note = f", {per_cpu:,.0f} per forwarder CPU-second" if per_cpu else ""
    print(
        f"real sockets (Unix consumer, TCP producer, window {args.window}): "
        f"{rate:,.0f} exchanges/s wall{cpu_note}"
    )
    print(f"ratio sockets/core (wall): {rate / core['exchanges_per_s']:.2f}")


if __name__ == "__main__":
    main()
