"""Launch one training run as ``workers`` subprocesses on this machine.

Contract (``pactrain bench`` relies on it)::

    result = run_training(config, command_prefix_for_rank=None, master_addr="127.0.0.1")

- Each rank is a subprocess ``[*prefix(rank), python, -m, pactrain.train.worker, CFG]``
  with RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT set, exactly what torchrun
  would set; ``command_prefix_for_rank(rank)`` may return e.g.
  ``["ip", "netns", "exec", f"ns-{rank}"]`` to run each rank in its own namespace (then
  ``master_addr`` must be rank 0's address as the other namespaces see it).
- Rank 0 writes the result JSON; it is read back and returned as a dict (and left at
  ``config.json_out`` when set).
- If a worker exits non-zero, all others are killed and :class:`WorkerFailedError` carries
  that rank's stderr tail (its traceback). Nothing waits forever: after ``timeout_s``
  every worker is killed and :class:`TrainingTimeoutError` is raised.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from pactrain.train.config import RunConfig


class WorkerFailedError(RuntimeError):
    """A worker exited with an error; the message holds its stderr tail."""


class TrainingTimeoutError(TimeoutError):
    """The run did not finish within its timeout; all workers were killed."""


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _tail(path: Path, limit: int = 4000) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return text[-limit:]


def _kill_all(procs: Sequence[subprocess.Popen]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
    for proc in procs:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)


def _exit_on_sigterm() -> Any:
    """Turn SIGTERM into SystemExit while workers run, so ``finally`` kills them (a
    terminated launcher must not leave orphaned workers). Returns the previous handler,
    or None off the main thread, where handlers cannot be installed."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def terminate(signum: int, _frame: Any) -> None:
        raise SystemExit(128 + signum)

    return signal.signal(signal.SIGTERM, terminate)


def run_training(
    config: RunConfig,
    command_prefix_for_rank: Callable[[int], Sequence[str]] | None = None,
    master_addr: str = "127.0.0.1",
    master_port: int | None = None,
    timeout_s: float = 1800.0,
    progress: bool = True,
    python: str = sys.executable,
    extra_env: dict[str, str] | None = None,
    log_dir: str | Path | None = None,
) -> dict[str, Any]:
    """Run ``config`` on ``config.workers`` local subprocesses and return rank 0's result.

    Each rank's output (tracebacks, logged tier decisions, mask warnings) goes to
    ``rank{r}.log`` in ``log_dir`` when given (kept), else in a temporary folder.

    Raises:
        WorkerFailedError: a worker failed (message: rank, exit code, stderr tail).
        TrainingTimeoutError: the run exceeded ``timeout_s``.
    """
    with tempfile.TemporaryDirectory(prefix="pactrain-run-") as tmp_name:
        tmp = Path(tmp_name)
        result_path = Path(config.json_out) if config.json_out else tmp / "result.json"
        if result_path.exists():
            result_path.unlink()
        run_config = replace(config, json_out=str(result_path),
                             progress_path=str(tmp / "progress"))
        config_path = tmp / "config.json"
        run_config.save(config_path)
        port = master_port or free_port()
        procs: list[subprocess.Popen] = []
        logs: list[Path] = []
        previous_handler = _exit_on_sigterm()
        try:
            for rank in range(config.workers):
                env = dict(os.environ)
                env.update({
                    "RANK": str(rank), "LOCAL_RANK": str(rank),
                    "WORLD_SIZE": str(config.workers), "MASTER_ADDR": master_addr,
                    "MASTER_PORT": str(port), "OMP_NUM_THREADS": "1",
                })
                env.update(extra_env or {})
                prefix = list(command_prefix_for_rank(rank)) if command_prefix_for_rank else []
                argv = [*prefix, python, "-m", "pactrain.train.worker", str(config_path)]
                log = (Path(log_dir) if log_dir else tmp) / f"rank{rank}.log"
                log.parent.mkdir(parents=True, exist_ok=True)
                logs.append(log)
                with log.open("wb") as sink:
                    procs.append(subprocess.Popen(argv, env=env, stdout=sink,
                                                  stderr=subprocess.STDOUT))
            _wait(procs, logs, config, tmp / "progress", timeout_s, progress)
        finally:
            _kill_all(procs)
            if previous_handler is not None:
                signal.signal(signal.SIGTERM, previous_handler)
        if not result_path.exists():
            raise WorkerFailedError(
                f"rank 0 finished without writing {result_path}; its log:\n{_tail(logs[0])}"
            )
        return json.loads(result_path.read_text())


def _wait(
    procs: list[subprocess.Popen], logs: list[Path], config: RunConfig,
    progress_path: Path, timeout_s: float, progress: bool,
) -> None:
    """Poll the workers until all exit 0; kill everything on the first failure or timeout."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    deadline = time.monotonic() + timeout_s
    bar = Progress("[bold]{task.description}", BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), disable=not progress, transient=False)
    with bar:
        task = bar.add_task(f"{config.model} {config.method} x{config.workers}",
                            total=min(config.stop_after or config.steps, config.steps))
        while True:
            codes = [p.poll() for p in procs]
            for rank, code in enumerate(codes):
                if code not in (None, 0):
                    _kill_all(procs)
                    raise WorkerFailedError(
                        f"worker rank {rank} exited with status {code}; its output ends "
                        f"with:\n{_tail(logs[rank])}"
                    )
            with contextlib.suppress(OSError, ValueError):
                bar.update(task, completed=int(progress_path.read_text() or 0))
            if all(code == 0 for code in codes):
                return
            if time.monotonic() > deadline:
                _kill_all(procs)
                raise TrainingTimeoutError(
                    f"training did not finish within {timeout_s:.0f} s; killed all workers. "
                    f"Rank 0's output ends with:\n{_tail(logs[0])}"
                )
            time.sleep(0.1)
