"""Run a Python function on every rank of a local gloo group (forked processes).

For tests and notebooks: ``run_on_local_group(fn, world_size, *args)`` forks
``world_size`` processes, initializes a gloo group on 127.0.0.1 with a free port, calls
``fn(rank, world_size, *args)`` in each and returns the ranks' return values in rank order.
A failing rank's traceback is re-raised in the caller as :class:`LocalGroupError`; every
process is killed after ``timeout_s``, so a deadlock fails the test instead of hanging it.
Forking (not spawning) lets ``fn`` be any function, also one defined inside a test module.
"""

from __future__ import annotations

import datetime
import gc
import multiprocessing as mp
import os
import pickle
import queue
import traceback
from collections.abc import Callable
from typing import Any

from pactrain.train.launch import free_port


class LocalGroupError(RuntimeError):
    """A rank of a local group failed or timed out."""


def _child(
    fn: Callable[..., Any], rank: int, world_size: int, port: int, args: tuple[Any, ...],
    results: Any,
) -> None:
    """One rank: run ``fn``, report its value (or traceback), leave with ``os._exit``.

    Why ``os._exit`` with the group still referenced: a comm hook's future callbacks run in
    gloo's threads, and when the last reference to the process group was dropped there, its
    destructor joined the thread it ran in ("terminate called after throwing an instance of
    'std::system_error' what(): Resource deadlock avoided", SIGABRT; one run in six of
    tests/methods/test_powersgd.py). The value is already reported, so nothing is lost
    by skipping the interpreter's teardown.
    """
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    group = None
    try:
        dist.init_process_group(
            "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world_size,
            timeout=datetime.timedelta(seconds=60),
        )
        group = dist.group.WORLD  # see above: released only by os._exit
        value = fn(rank, world_size, *args)
        gc.collect()  # what fn left behind is freed here, on this thread
        dist.destroy_process_group()
        # plain bytes: a tensor put on the queue as-is would travel as a shared-memory
        # handle that dies with this process before the parent reads it
        results.put((rank, True, pickle.dumps(value)))
    except BaseException:  # report everything, also assertion errors
        results.put((rank, False, traceback.format_exc()))
    finally:
        results.close()
        results.join_thread()  # the report is in the pipe before the process ends
        os._exit(0 if group is not None else 1)


def run_on_local_group(
    fn: Callable[..., Any], world_size: int, *args: Any, timeout_s: float = 120.0,
) -> list[Any]:
    """Call ``fn(rank, world_size, *args)`` on each rank of a fresh gloo group."""
    ctx = mp.get_context("fork")
    results = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=_child, args=(fn, r, world_size, port, args, results))
             for r in range(world_size)]
    for proc in procs:
        proc.start()
    values: dict[int, Any] = {}
    try:
        import time

        deadline = time.monotonic() + timeout_s
        while len(values) < world_size:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise LocalGroupError(
                    f"ranks {sorted(set(range(world_size)) - set(values))} did not finish "
                    f"within {timeout_s:.0f} s"
                )
            try:
                rank, ok, value = results.get(timeout=min(remaining, 1.0))
            except queue.Empty:
                dead = [r for r, p in enumerate(procs)
                        if p.exitcode not in (None, 0) and r not in values]
                if dead:
                    raise LocalGroupError(f"ranks {dead} died without reporting") from None
                continue
            if not ok:
                raise LocalGroupError(f"rank {rank} failed:\n{value}")
            values[rank] = pickle.loads(value)
    finally:
        for proc in procs:
            proc.join(timeout=5)
            if proc.is_alive():
                proc.kill()
                proc.join(timeout=5)
    return [values[r] for r in range(world_size)]
