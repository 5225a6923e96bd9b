"""Issue 14: a packet whose processing raises costs that packet, and the log stays small.

A forwarder with a buggy hook (it raises for every Interest under ``/boom``, as a
scheme's bug would) serves real unix-socket clients from its own thread and event
loop. One client sends 400 such Interests; another keeps being served, the drops are
counted, and the log holds one traceback, not 400.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from pathlib import Path

import pytest

from dticn.forwarder.errors import InternalErrorLog
from dticn.forwarder.face import Face
from dticn.forwarder.forwarder import Forwarder
from dticn.forwarder.hooks import ForwarderHooks
from dticn.forwarder.pit import PitEntry
from dticn.mgmt.nfd import NfdManagement
from dticn.net.asyncio_clock import AsyncioClock
from dticn.net.listen import ListenUri, open_listener
from dticn.packets import Data, Interest, name_from_str

from .test_flood import Client

N = name_from_str
BOOM = N("/boom")


class BuggyHooks(ForwarderHooks):
    """Raises for ``/boom`` Interests (a stand-in for a scheme's bug)."""

    def on_interest_propagate(
        self, fw: Forwarder, in_face: Face, interest: Interest, entry: PitEntry
    ) -> bool:
        if interest.name[:1] == BOOM:
            raise KeyError(f"no state for {interest.name!r}")
        return False


def test_a_face_triggering_an_internal_error_per_packet_is_logged_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    path = str(tmp_path / "fw.sock")
    ready, stop_box = threading.Event(), {}

    def run() -> None:
        async def main() -> None:
            fw = Forwarder(AsyncioClock(), hooks=BuggyHooks())
            NfdManagement(fw)
            _, close = await open_listener(fw, ListenUri("unix", path=path))
            stop = asyncio.Event()
            stop_box.update(fw=fw, stop=stop, loop=asyncio.get_running_loop())
            ready.set()
            await stop.wait()
            close()
            for face in list(fw.faces.values()):
                face.close()

        asyncio.run(main())

    thread = threading.Thread(target=run, daemon=True)
    with caplog.at_level(logging.ERROR, logger="dticn"):
        thread.start()
        assert ready.wait(10)
        clients: list[Client] = []
        try:
            producer, attacker, consumer = Client(path), Client(path), Client(path)
            clients += [producer, attacker, consumer]
            producer.register("/good", 1)
            producer.register("/boom", 2)
            attacker.send(*(Interest(N(f"/boom/{k}"), nonce=k).encode() for k in range(400)))
            for k in range(20):   # served throughout, on the same event loop
                consumer.send(Interest(N(f"/good/{k}"), nonce=1000 + k).encode())
                interest = producer.recv()
                assert isinstance(interest, Interest) and interest.name == N(f"/good/{k}")
                producer.send(Data(interest.name, b"ok").encode())
                data = consumer.recv()
                assert isinstance(data, Data) and data.name == N(f"/good/{k}")
            deadline = time.monotonic() + 10
            while (stop_box["fw"].counters.drops["internal_error"] < 400  # type: ignore[attr-defined]
                   and time.monotonic() < deadline):
                time.sleep(0.01)
        finally:
            for c in clients:
                c.close()
            loop = stop_box.get("loop")
            if loop is not None:
                loop.call_soon_threadsafe(stop_box["stop"].set)  # type: ignore[attr-defined]
            thread.join(10)
    fw = stop_box["fw"]
    assert isinstance(fw, Forwarder)
    assert fw.counters.drops["internal_error"] == 400
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and errors[0].exc_info is not None
    assert "KeyError" in caplog.text and "internal error on face" in caplog.text
    [total] = fw.internal_errors.totals().values()
    assert total == 400


def test_the_next_traceback_of_a_site_comes_after_the_interval_with_a_count(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [0.0]
    errors = InternalErrorLog(lambda: now[0], interval=10.0)

    def fail(k: int) -> None:
        try:
            {}[k]
        except KeyError as exc:
            errors.report(exc, f"packet {k}")

    with caplog.at_level(logging.ERROR, logger="dticn.forwarder"):
        for k in range(100):
            now[0] = k * 0.25          # 25 s of one error per 0.25 s
            fail(k)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 3             # at 0 s, 10 s and 20 s
    assert lines[0] == "internal error packet 0"
    assert "(39 more at this site in the last 10 s, 41 in all;" in lines[1]
    assert all(r.exc_info is not None for r in caplog.records)
