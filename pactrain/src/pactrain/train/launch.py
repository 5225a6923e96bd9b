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
from pactrain.wire_counters import WIRE_INTERFACE_ENV, WORKER_IFNAME


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
                per_node = config.workers // config.nodes  # torchrun numbers node by node
                env.update({
                    "RANK": str(rank), "LOCAL_RANK": str(rank % per_node),
                    "LOCAL_WORLD_SIZE": str(per_node), "GROUP_RANK": str(rank // per_node),
                    "WORLD_SIZE": str(config.workers), "MASTER_ADDR": master_addr,
                    "MASTER_PORT": str(port), "OMP_NUM_THREADS": "1",
                })
                prefix = list(command_prefix_for_rank(rank)) if command_prefix_for_rank else []
                if prefix:  # in its own namespace: eth0 carries only this worker's traffic
                    env[WIRE_INTERFACE_ENV] = WORKER_IFNAME
                env.update(extra_env or {})
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


def read_heartbeats(progress_path: Path, workers: int) -> list[tuple[int, str]]:
    """Each rank's (completed steps, phase): phase ``reducing`` once its backward pass is
    done and it waits for the others, else ``""`` ((0, "") if it wrote nothing yet)."""
    beats = []
    for rank in range(workers):
        try:
            step, _, phase = Path(f"{progress_path}.rank{rank}").read_text().partition(" ")
            beats.append((int(step or 0), phase.strip()))
        except (OSError, ValueError):
            beats.append((0, ""))
    return beats


def stopped_ranks(procs: Sequence[subprocess.Popen]) -> list[int]:
    """Ranks whose process is stopped (SIGSTOP, a debugger): state ``T``/``t`` in
    ``/proc/<pid>/stat``."""
    stopped = []
    for rank, proc in enumerate(procs):
        with contextlib.suppress(OSError, IndexError):
            state = Path(f"/proc/{proc.pid}/stat").read_text().rpartition(")")[2].split()[0]
            if state in ("T", "t"):
                stopped.append(rank)
    return stopped


def stalled_ranks(beats: list[tuple[int, str]], stopped: Sequence[int] = ()) -> str:
    """A sentence naming the ranks the others wait for, or '' when none stands out.

    Why: when one rank stalls (stopped, hung, starved), the healthy ranks are the ones whose
    collectives time out and exit with an error, so the rank that failed first is not the
    culprit. A stopped process is named as such; otherwise behind = fewer completed steps,
    or the same step but not yet reducing.
    """
    if stopped:
        return (f" Stalled: rank(s) {', '.join(map(str, stopped))} stopped (SIGSTOP or a "
                "debugger); the others timed out in a collective waiting for it.")
    if not beats:
        return ""
    ahead = max(beats, key=lambda beat: (beat[0], beat[1] == "reducing"))
    behind = [rank for rank, beat in enumerate(beats)
              if (beat[0], beat[1] == "reducing") < (ahead[0], ahead[1] == "reducing")]
    if not behind:
        return ""
    where = ", ".join(f"rank {r} at step {beats[r][0] + 1} "
                      f"{'reducing' if beats[r][1] else 'computing'}" for r in behind)
    return (f" Stalled: {where}, while the others reached step {ahead[0] + 1} "
            f"{'reducing' if ahead[1] else 'computing'}; the others then time out in a "
            "collective waiting for it (raise --collective-timeout only if it is just slow).")


def _stall_report(procs: Sequence[subprocess.Popen], progress_path: Path) -> str:
    """The sentence naming the stalled rank(s), read before the workers are killed."""
    return stalled_ranks(read_heartbeats(progress_path, len(procs)), stopped_ranks(procs))


def _wait(
    procs: list[subprocess.Popen], logs: list[Path], config: RunConfig,
    progress_path: Path, timeout_s: float, progress: bool,
) -> None:
    """Poll the workers until all exit 0; kill everything on the first failure or timeout."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    deadline = time.monotonic() + timeout_s
    bar = Progress("[bold]{task.description}", BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), disable=not progress, transient=False,
                   console=Console(stderr=True))  # stdout stays for results
    with bar:
        task = bar.add_task(f"{config.model} {config.method} x{config.workers}",
                            total=min(config.stop_after or config.steps, config.steps))
        while True:
            codes = [p.poll() for p in procs]
            for rank, code in enumerate(codes):
                if code not in (None, 0):
                    stalled = _stall_report(procs, progress_path)
                    _kill_all(procs)
                    raise WorkerFailedError(
                        f"worker rank {rank} exited with status {code}.{stalled} "
                        f"Rank {rank}'s output ends with:\n{_tail(logs[rank])}"
                    )
            with contextlib.suppress(OSError, ValueError):
                bar.update(task, completed=int(Path(f"{progress_path}.rank0").read_text()
                                               or 0))
            if all(code == 0 for code in codes):
                return
            if time.monotonic() > deadline:
                stalled = _stall_report(procs, progress_path)
                _kill_all(procs)
                raise TrainingTimeoutError(
                    f"training did not finish within {timeout_s:.0f} s; killed all workers."
                    f"{stalled} "
                    f"Rank 0's output ends with:\n{_tail(logs[0])}"
                )
            time.sleep(0.1)
