"""The heartbeat file follows the step without the step writing it."""

import threading
import time
from pathlib import Path

from pactrain.train.heartbeat import WRITE_EVERY_S, Heartbeat
from pactrain.train.launch import read_heartbeats


def _wait_for(path: Path, rank: int, expected: tuple[int, str]) -> tuple[int, str]:
    deadline = time.monotonic() + 20 * WRITE_EVERY_S
    beat = read_heartbeats(path, rank + 1)[rank]
    while beat != expected and time.monotonic() < deadline:
        time.sleep(WRITE_EVERY_S / 4)
        beat = read_heartbeats(path, rank + 1)[rank]
    return beat


def test_the_thread_writes_the_latest_state_and_close_writes_the_last(tmp_path: Path) -> None:
    path = tmp_path / "progress"
    with Heartbeat(str(path), 1, 7) as heartbeat:
        assert read_heartbeats(path, 2)[1] == (7, "")  # written at once on start
        heartbeat.beat(8)
        heartbeat.reducing()
        assert _wait_for(path, 1, (8, "reducing")) == (8, "reducing")
        heartbeat.beat(9)
        assert _wait_for(path, 1, (9, "")) == (9, "")
        heartbeat.beat(10)
    assert read_heartbeats(path, 2)[1] == (10, "")  # close wrote it, thread gone
    assert not any(t.name == "pactrain-heartbeat" for t in threading.enumerate())


def test_without_a_path_nothing_is_written_and_no_thread_runs(tmp_path: Path) -> None:
    before = {t.ident for t in threading.enumerate()}
    heartbeat = Heartbeat(None, 0, 0)
    heartbeat.beat(3)
    heartbeat.close()
    assert {t.ident for t in threading.enumerate()} <= before
    assert list(tmp_path.iterdir()) == []
