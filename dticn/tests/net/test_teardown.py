"""Issue 14, item 2: tearing a face down costs that face's own state, and memory comes
back after a flood leaves.

Real unix sockets throughout: a forwarder process for the churn measurement (other
clients connect and leave while 60k Interests of four flooding faces are pending), and
a forwarder in this process (its own thread and event loop) for the soak, so traced
Python allocations can be compared before and after each flood.
"""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys
import threading
import time
import tracemalloc
from pathlib import Path

import pytest

from dticn.net.daemon import serve
from dticn.packets import Data, Interest, name_from_str

from .test_flood import Client

N = name_from_str


def _exchange(path: str, producer: Client, tag: str) -> None:
    consumer = Client(path)
    try:
        consumer.send(Interest(N(f"/good/{tag}"), nonce=7).encode())
        interest = producer.recv()
        assert isinstance(interest, Interest)
        producer.send(Data(interest.name, b"ok").encode())
        assert isinstance(consumer.recv(), Data)
    finally:
        consumer.close()


def _flood(path: str, silent: Client, faces: int, per_face: int, tag: str) -> list[Client]:
    attackers = [Client(path) for _ in range(faces)]
    for i, attacker in enumerate(attackers):
        attacker.send(*(
            Interest(N(f"/never/{tag}/{i}/{k}"), nonce=k, lifetime_ms=600_000).encode()
            for k in range(per_face)
        ))
    for _ in range(faces * per_face):  # every Interest reached the silent upstream
        assert isinstance(silent.recv(), Interest)
    return attackers


@pytest.mark.slow
def test_connection_churn_with_60k_pending_interests(tmp_path: Path) -> None:
    sock = tmp_path / "fw.sock"
    proc = subprocess.Popen(
        [sys.executable, "-m", "dticn.cli", "forwarder", "--listen", f"unix://{sock}"],
        stdout=subprocess.PIPE, stderr=open(tmp_path / "fw.log", "w"), text=True,  # noqa: SIM115
    )
    path = str(sock)
    try:
        assert proc.stdout is not None
        while proc.stdout.readline().strip() not in ("READY", ""):
            pass
        silent, producer = Client(path), Client(path)
        silent.register("/never", 1)
        producer.register("/good", 2)
        attackers = _flood(path, silent, faces=4, per_face=15_000, tag="churn")
        started = time.perf_counter()
        for _ in range(300):
            Client(path).close()
        _exchange(path, producer, "after-churn")  # every close was processed before this
        churn = 300 / (time.perf_counter() - started)
        started = time.perf_counter()
        attackers[0].close()  # 15k pending Interests of its own go with it
        _exchange(path, producer, "after-teardown")
        teardown = time.perf_counter() - started
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    print(f"churn {churn:.0f} connections/s, 15k-entry face teardown {teardown * 1e3:.0f} ms")
    assert churn >= 500, churn
    assert teardown < 2.0, teardown


@pytest.mark.slow
def test_memory_returns_after_floods_leave(tmp_path: Path) -> None:
    path = str(tmp_path / "fw.sock")
    ready = threading.Event()
    loop_box: dict[str, object] = {}

    def run() -> None:
        async def main() -> None:
            stop = asyncio.Event()
            loop_box["stop"], loop_box["loop"] = stop, asyncio.get_running_loop()
            loop_box["fw"] = await serve([f"unix://{path}"], ready=lambda _b: ready.set(),
                                         stop=stop)
        asyncio.run(main())

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(10)
    silent, producer = Client(path), Client(path)
    silent.register("/never", 1)
    producer.register("/good", 2)
    _exchange(path, producer, "warm")
    tracemalloc.start()
    try:
        after: list[int] = []
        for cycle in range(3):
            attackers = _flood(path, silent, faces=2, per_face=4_000, tag=str(cycle))
            flooded = tracemalloc.get_traced_memory()[0]
            for attacker in attackers:
                attacker.close()
            _exchange(path, producer, f"cycle{cycle}")
            time.sleep(0.1)
            gc.collect()
            after.append(tracemalloc.get_traced_memory()[0])
            assert flooded - after[-1] > 2_000_000  # the flood's state was really freed
    finally:
        tracemalloc.stop()
        stop, loop = loop_box["stop"], loop_box["loop"]
        loop.call_soon_threadsafe(stop.set)  # type: ignore[attr-defined]
        thread.join(10)
    # no growth from one flood to the next (a leak of even 100 bytes per Interest
    # would show as 800 kB)
    assert max(after) - min(after) < 200_000, after
