"""A stalled worker: the run fails after the collective timeout and names the stalled rank."""

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from pactrain.train.config import RunConfig
from pactrain.train.launch import WorkerFailedError, free_port, run_training


def _worker_pid(rank: int, port: int, deadline: float) -> int:
    """The pid of our worker ``rank`` (found by its environment, as ps would)."""
    while time.monotonic() < deadline:
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                cmdline = (entry / "cmdline").read_bytes()
                environ = (entry / "environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if (b"pactrain.train.worker" in cmdline and f"RANK={rank}".encode() in environ
                    and f"MASTER_PORT={port}".encode() in environ):
                return int(entry.name)
        time.sleep(0.2)
    raise AssertionError(f"worker rank {rank} did not start")


@pytest.mark.slow
def test_a_stopped_rank_is_named_when_the_others_time_out(tmp_path: Path) -> None:
    port = free_port()
    config = RunConfig(model="digits-cnn", method="pactrain", workers=3, steps=100_000,
                       timeout_s=6.0, evaluate=False, probe_link=False)
    outcome: dict = {}

    def run() -> None:
        try:
            run_training(config, master_port=port, timeout_s=120, progress=False,
                         log_dir=tmp_path)
        except WorkerFailedError as err:
            outcome["error"] = str(err)

    thread = threading.Thread(target=run)
    thread.start()
    pid = _worker_pid(2, port, time.monotonic() + 60)
    time.sleep(8)  # a few steps in
    started = time.monotonic()
    os.kill(pid, signal.SIGSTOP)
    try:
        thread.join(timeout=90)
    finally:
        os.kill(pid, signal.SIGCONT) if Path(f"/proc/{pid}").exists() else None
    assert not thread.is_alive()
    assert time.monotonic() - started < 60  # the collective timeout, not the run's
    stalled = outcome["error"].split("Stalled:")[1].split(";")[0]
    assert "rank(s) 2 stopped" in stalled, outcome["error"][:600]


def test_heartbeats_name_the_rank_the_others_wait_for() -> None:
    from pactrain.train.launch import stalled_ranks

    assert stalled_ranks([(5, "reducing"), (5, ""), (5, "reducing")]).startswith(
        " Stalled: rank 1 at step 6 computing")  # still in its backward pass
    assert "rank 1 at step 6 reducing" in stalled_ranks([(6, ""), (5, "reducing"), (6, "")])
    assert stalled_ranks([(5, "reducing")] * 3) == ""  # nobody stands out: say nothing
