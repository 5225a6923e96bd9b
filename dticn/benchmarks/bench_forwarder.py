"""Interest/Data exchanges per second: the sans-IO core alone, and over real sockets.

1. Core alone: one forwarder on the EventKernel, a consumer and a producer
   RecordingFace; each exchange is one Interest in (decode, PIT insert, CS miss, FIB
   lookup, out-record, send) and one Data in (decode, PIT match, CS insert with LRU
   eviction, send). Distinct names, so every exchange misses the cache.
2. Real sockets: ``dticn forwarder`` as a separate process; a raw TLV producer on TCP
   (registered through ``/localhost/nfd/rib/register``, answering from Data encoded
   before the clock starts) and ``--consumers`` raw consumers on the Unix socket, each
   keeping ``--window`` Interests outstanding. The clients share one process (one core
   of this 2-core machine), so the wall rate is bounded by them as well as by the
   forwarder; the rate per forwarder CPU-second (utime + stime of the forwarder process
   from /proc) is the forwarder's own figure.

``--baseline REF`` runs the same measurements with the forwarder of git ``REF``
(``git archive`` of its ``dticn/src`` into a temporary directory, put first on
``PYTHONPATH``) next to the working tree's, alternating runs (A, B, A, B) and keeping the
best of ``--repeats`` for each, and prints both and their ratio. The clients are this
file's in both cases, so only the forwarder differs.

Run: ``python dticn/benchmarks/bench_forwarder.py [--exchanges N] [--window W]
[--consumers C] [--repeats R] [--baseline REF] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORKTREE_SRC = HERE.parent / "src"
REPO = HERE.parent.parent


# --------------------------------------------------------------------- core alone
def bench_core(n: int, repeats: int = 3) -> dict[str, float]:
    """Exchanges per second through the core alone (no sockets, no logging).

    Best of ``repeats`` runs, by wall time and by this process's CPU time: the machine
    is shared, and CPU time is what "per core" means. Uses only APIs that older
    revisions have too, so ``--baseline`` can run it against them.
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
    from dticn.forwarder.face import RecordingFace
    from dticn.forwarder.forwarder import Forwarder
    from dticn.forwarder.settings import ForwarderConfig
    from dticn.packets import Data, Interest, name_from_str
    from dticn.sim.kernel import EventKernel

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


def _core_in_subprocess(src: Path, n: int, repeats: int) -> dict[str, float]:
    """:func:`bench_core` with the forwarder of ``src`` (another revision's dticn/src)."""
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import bench_forwarder as b; "
        "print(json.dumps(b.bench_core(int(sys.argv[2]), int(sys.argv[3]))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(HERE), str(n), str(repeats)],
        env=_env_for(src), capture_output=True, text=True, check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- raw TLV clients
def _split_frames(buf: bytearray) -> list[bytes]:
    """Cut complete TLVs off the front of ``buf`` (1- or 3-byte TYPE/LENGTH only)."""
    frames = []
    pos = 0
    n = len(buf)
    while n - pos >= 2:
        p = pos + 1 if buf[pos] < 0xFD else pos + 3
        if p >= n:
            break
        first = buf[p]
        if first < 0xFD:
            length, hdr_end = first, p + 1
        elif first == 0xFD:
            if n < p + 3:
                break
            length, hdr_end = int.from_bytes(buf[p + 1 : p + 3], "big"), p + 3
        else:
            raise ValueError("frame too large for this benchmark")
        end = hdr_end + length
        if n < end:
            break
        frames.append(bytes(buf[pos:end]))
        pos = end
    del buf[:pos]
    return frames


def _name_tlv(interest: bytes) -> bytes:
    """The Name TLV of an Interest wire (short names: 1-byte Name length)."""
    p = 2 if interest[1] < 0xFD else 4
    return interest[p : p + 2 + interest[p + 1]]


class _Producer(asyncio.Protocol):
    """Answers every Interest with Data encoded beforehand (the producer costs a dict
    lookup per Interest, so the forwarder, not the producer, is measured)."""

    def __init__(self, answers: dict[bytes, bytes], registered: asyncio.Future[None]) -> None:
        self.answers = answers
        self.registered = registered
        self.buf = bytearray()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buf += data
        out = []
        answers = self.answers
        for frame in _split_frames(self.buf):
            if frame[0] == 0x05:
                out.append(answers[_name_tlv(frame)])
            elif frame[0] == 0x06 and not self.registered.done():
                self.registered.set_result(None)
        if out and self.transport is not None:
            self.transport.write(b"".join(out))


class _Consumer(asyncio.Protocol):
    """Keeps ``window`` Interests outstanding until every one has its Data."""

    def __init__(self, interests: list[bytes], window: int, done: asyncio.Future[None]) -> None:
        self.interests = interests
        self.window = window
        self.done = done
        self.buf = bytearray()
        self.sent = 0
        self.received = 0
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def start(self) -> None:
        self.sent = min(self.window, len(self.interests))
        assert self.transport is not None
        self.transport.write(b"".join(self.interests[: self.sent]))

    def data_received(self, data: bytes) -> None:
        self.buf += data
        self.received += sum(1 for f in _split_frames(self.buf) if f[0] == 0x06)
        n = len(self.interests)
        if self.received >= n:
            if not self.done.done():
                self.done.set_result(None)
            return
        more = min(n, self.received + self.window) - self.sent
        if more > 0 and self.transport is not None:
            self.transport.write(b"".join(self.interests[self.sent : self.sent + more]))
            self.sent += more


def _cpu_seconds(pid: int) -> float | None:
    """utime + stime of a process from /proc (Linux); None elsewhere."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def _env_for(src: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(src), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


@dataclass(slots=True)
class SocketRun:
    """One socket run: wall rate and the forwarder's CPU rate."""

    exchanges_per_s: float
    exchanges_per_forwarder_cpu_s: float | None


def _workload(n: int, consumers: int) -> tuple[list[list[bytes]], dict[bytes, bytes]]:
    from dticn.packets import Data, Interest, name_from_str

    per = [n // consumers + (1 if c < n % consumers else 0) for c in range(consumers)]
    interests, answers = [], {}
    payload = b"x" * 32
    for c, count in enumerate(per):
        mine = []
        for k in range(count):
            name = name_from_str(f"/bench/c{c}/{k}")
            wire = Interest(name, nonce=k + 7, lifetime_ms=4000).encode()
            mine.append(wire)
            answers[_name_tlv(wire)] = Data(name, payload).encode()
        interests.append(mine)
    return interests, answers


async def _bench_sockets(
    src: Path, interests: list[list[bytes]], answers: dict[bytes, bytes], window: int,
    cprofile: str = "",
) -> SocketRun:
    from dticn.packets import Interest, encode_name, name_from_str

    loop = asyncio.get_running_loop()
    n = sum(len(i) for i in interests)
    with tempfile.TemporaryDirectory() as tmp:
        sock = os.path.join(tmp, "fw.sock")
        profiler = ["-m", "cProfile", "-o", cprofile] if cprofile else []
        proc = subprocess.Popen(
            [sys.executable, *profiler, "-m", "dticn.cli", "forwarder", "--listen", "tcp://127.0.0.1:0",
             "--listen", f"unix://{sock}", "--log-level", "warning",
             "--cs-capacity", "1000"],
            stdout=subprocess.PIPE, text=True, env=_env_for(src),
        )
        try:
            assert proc.stdout is not None
            tcp = proc.stdout.readline().split()[1]
            proc.stdout.readline()
            proc.stdout.readline()
            host, port = tcp.removeprefix("tcp://").rsplit(":", 1)
            registered: asyncio.Future[None] = loop.create_future()
            ptrans, _ = await loop.create_connection(
                lambda: _Producer(answers, registered), host, int(port))
            name_tlv = encode_name(name_from_str("/bench"))
            cp = b"\x68" + bytes((len(name_tlv),)) + name_tlv  # ControlParameters
            comp = b"\x08" + bytes((len(cp),)) + cp
            reg_name = (*name_from_str("/localhost/nfd/rib/register"), comp)
            ptrans.write(Interest(reg_name, nonce=1, lifetime_ms=1000).encode())
            await asyncio.wait_for(registered, 10)
            clients = []
            for mine in interests:
                done: asyncio.Future[None] = loop.create_future()
                _, proto = await loop.create_unix_connection(
                    lambda m=mine, d=done: _Consumer(m, window, d), sock)  # type: ignore[misc]
                clients.append(proto)
            cpu0 = _cpu_seconds(proc.pid)
            t0 = time.perf_counter()
            for c in clients:
                c.start()
            await asyncio.wait_for(asyncio.gather(*(c.done for c in clients)), 60)
            dt = time.perf_counter() - t0
            cpu1 = _cpu_seconds(proc.pid)
            ptrans.close()
            for c in clients:
                if c.transport is not None:
                    c.transport.close()
            per_cpu = n / (cpu1 - cpu0) if cpu0 is not None and cpu1 is not None and (
                cpu1 > cpu0) else None
            return SocketRun(n / dt, per_cpu)
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def _best(runs: list[SocketRun]) -> SocketRun:
    cpu = [r.exchanges_per_forwarder_cpu_s for r in runs if r.exchanges_per_forwarder_cpu_s]
    return SocketRun(max(r.exchanges_per_s for r in runs), max(cpu) if cpu else None)


def _baseline_src(ref: str, tmp: str) -> Path:
    """``dticn/src`` of git ``ref`` unpacked under ``tmp`` (the repo is not touched)."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", ref, "dticn/src"], capture_output=True, check=False
    )
    if archive.returncode != 0:
        raise SystemExit(f"--baseline {ref}: git archive failed: "
                         f"{archive.stderr.decode().strip()}")
    subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
    return Path(tmp) / "dticn" / "src"


def _rev(ref: str) -> str:
    out = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", ref],
                         capture_output=True, text=True, check=False)
    return out.stdout.strip() or ref


def _fmt_core(core: dict[str, float]) -> str:
    return (f"{core['exchanges_per_s']:,.0f} exchanges/s wall, "
            f"{core['exchanges_per_cpu_s']:,.0f} per CPU-second "
            f"({core['us_per_exchange_cpu']:.1f} us CPU/exchange)")


def _fmt_sock(run: SocketRun) -> str:
    cpu = run.exchanges_per_forwarder_cpu_s
    cpu_note = f", {cpu:,.0f} per forwarder CPU-second" if cpu else ""
    return f"{run.exchanges_per_s:,.0f} exchanges/s wall{cpu_note}"


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--exchanges", type=int, default=20_000)
    ap.add_argument("--window", type=int, default=64, help="Interests outstanding per consumer")
    ap.add_argument("--consumers", type=int, default=1, help="consumer connections")
    ap.add_argument("--repeats", type=int, default=3, help="runs of each; the best is kept")
    ap.add_argument("--baseline", default="", help="git ref whose forwarder runs alongside")
    ap.add_argument("--json", default="", help="also write the results to this file")
    ap.add_argument("--cprofile", default="",
                    help="run the current forwarder once more under cProfile, stats to FILE")
    ap.add_argument("--src", default=str(WORKTREE_SRC),
                    help="the dticn/src measured as 'current' (default: this checkout's)")
    args = ap.parse_args()
    if args.exchanges < 1 or args.window < 1 or args.consumers < 1 or args.repeats < 1:
        raise SystemExit("--exchanges, --window, --consumers and --repeats must be >= 1")
    current = Path(args.src).resolve()
    sys.path.insert(0, str(current))
    interests, answers = _workload(args.exchanges, args.consumers)
    with tempfile.TemporaryDirectory() as tmp:
        variants = {"current": current}
        if args.baseline:
            variants = {f"baseline {_rev(args.baseline)}": _baseline_src(args.baseline, tmp),
                        **variants}
        load0 = os.getloadavg()
        core_runs: dict[str, list[dict[str, float]]] = {k: [] for k in variants}
        runs: dict[str, list[SocketRun]] = {k: [] for k in variants}
        for _ in range(args.repeats):  # A, B, A, B: both see the same load
            for k, src in variants.items():
                core_runs[k].append(_core_in_subprocess(src, args.exchanges, 1))
            for k, src in variants.items():
                runs[k].append(asyncio.run(_bench_sockets(src, interests, answers, args.window)))
        core = {k: max(v, key=lambda r: r["exchanges_per_cpu_s"]) for k, v in core_runs.items()}
        load1 = os.getloadavg()
        if args.cprofile:
            asyncio.run(_bench_sockets(current, interests, answers, args.window,
                                       args.cprofile))
    sockets = {k: _best(v) for k, v in runs.items()}
    print(f"load average {load0[0]:.2f} before, {load1[0]:.2f} after; best of "
          f"{args.repeats}; {args.exchanges:,} exchanges")
    for k in variants:
        print(f"{k:>18} core alone: {_fmt_core(core[k])}")
    for k in variants:
        print(f"{k:>18} sockets ({args.consumers} Unix consumer(s), window {args.window}, "
              f"TCP producer): {_fmt_sock(sockets[k])}")
    if args.baseline:
        (base, cur) = list(variants)
        c_ratio = core[cur]["exchanges_per_cpu_s"] / core[base]["exchanges_per_cpu_s"]
        s_ratio = sockets[cur].exchanges_per_s / sockets[base].exchanges_per_s
        print(f"ratio current/baseline: core {c_ratio:.2f}x per CPU-second, sockets "
              f"{s_ratio:.2f}x wall", end="")
        bc, cc = (sockets[base].exchanges_per_forwarder_cpu_s,
                  sockets[cur].exchanges_per_forwarder_cpu_s)
        print(f", {cc / bc:.2f}x per forwarder CPU-second" if bc and cc else "")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "args": vars(args), "load_before": load0, "load_after": load1, "core": core,
            "core_runs": core_runs, "sockets": {k: asdict(v) for k, v in sockets.items()},
            "runs": {k: [asdict(r) for r in v] for k, v in runs.items()},
        }, indent=2) + "\n")


if __name__ == "__main__":
    main()
