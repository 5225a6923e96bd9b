"""Calibrating the estimate on this machine: one worker's compute per step, the local
costs the methods' hooks add, and the latency of one collective.

Each number is measured the way a run meets it:

- compute: ``workers`` real processes train the model with the ``no-comm`` method (its
  hook sends nothing, :mod:`pactrain.methods.no_comm`) on loopback for a few steps, so
  workers sharing this host's cores are timed sharing them;
- local costs: PacTrain's per-entry tier costs (:func:`pactrain.policy.probe_compute`),
  a matrix product, ``torch.topk`` and an elementwise pass, on one thread (each worker
  runs with ``OMP_NUM_THREADS=1``), scaled by workers per core when the workers outnumber
  the cores;
- latency (alpha): the median of small gloo all-reduces among ``workers`` processes on
  loopback.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

import torch

from pactrain.estimate.prices import LocalCosts


def measure_compute_s(model: str, workers: int, batch_size: int | None = None,
                      sparsity: float = 0.8, steps: int = 14, warmup_steps: int = 4) -> float:
    """Seconds of one training step of ``model`` with no communication, ``workers``
    processes on this host."""
    from pactrain.train.config import RunConfig
    from pactrain.train.launch import run_training

    config = RunConfig(model=model, method="no-comm", workers=workers, steps=steps,
                       batch_size=batch_size, sparsity=sparsity, warmup_steps=warmup_steps,
                       evaluate=False, probe_link=False)
    result = run_training(config, progress=False, timeout_s=600)
    return result["elapsed_s"] / result["timed_steps"]


def _per_entry(fn, count: int, repeats: int = 5) -> float:
    fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) / count


def measure_local_costs(workers: int, cores: int | None = None) -> LocalCosts:
    """The hooks' local costs on one thread of this machine, shared by ``workers``."""
    from pactrain.compression.communicator import Communicator
    from pactrain.policy import probe_compute

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        tiers = probe_compute(Communicator())
        generator = torch.Generator().manual_seed(0)
        matrix = torch.randn(512, 512, generator=generator)
        factor = torch.randn(512, 4, generator=generator)
        gradient = torch.randn(1 << 20, generator=generator)
        gemm = _per_entry(lambda: matrix @ factor, 2 * 512 * 512 * 4, repeats=20)
        topk = _per_entry(lambda: torch.topk(gradient.abs(), gradient.numel() // 100),
                          gradient.numel())
        one_pass = _per_entry(lambda: gradient.add(1.0), gradient.numel())
    finally:
        torch.set_num_threads(threads)
    cores = cores or os.cpu_count() or 1
    return LocalCosts(tiers, gemm, topk, one_pass, max(1.0, workers / cores))


def _latency_worker(rank: int, workers: int, port: int, out: str) -> None:
    import torch.distributed as dist

    from pactrain.compression.communicator import Communicator

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=workers)
    comm = Communicator()
    try:
        tensor = torch.zeros(16)
        samples = []
        for i in range(40):
            start = time.perf_counter()
            comm.control_all_reduce(tensor, name="probe")
            if i >= 10:
                samples.append(time.perf_counter() - start)
        if rank == 0:
            Path(out).write_text(str(statistics.median(samples)))
    finally:
        dist.destroy_process_group()


def measure_alpha_s(workers: int) -> float:
    """Median seconds of a 64-byte gloo all-reduce among ``workers`` processes on
    loopback (the collective's latency, before any link's bandwidth)."""
    import torch.multiprocessing as mp

    if workers < 2:
        return 0.0
    from pactrain.train.launch import free_port

    port = free_port()
    with tempfile.TemporaryDirectory() as scratch:
        out = str(Path(scratch) / "alpha")
        mp.spawn(_latency_worker, args=(workers, port, out), nprocs=workers, join=True)
        return float(Path(out).read_text())
