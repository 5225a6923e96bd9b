"""Running many experiments: one process per run, in parallel, same results as serial.

Every run is a pure function of its :class:`Experiment` (all randomness derives from its
seed), so the executor only decides where it runs, never what comes out: a
``ProcessPoolExecutor`` over local cores, or Ray tasks on a cluster (optional extra).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

from dticn.experiments.params import Experiment

Progress = Callable[[int, int], None]


class RayMissing(ImportError):
    """A Ray cluster was asked for but Ray is not installed (the message names the fix)."""


class RayUnreachable(ConnectionError):
    """No Ray instance answered at the address given (the message names the fix)."""


def trace_stem(exp: Experiment) -> str:
    """The file-name stem of a run's pcap traces: ``<config>-s<seed>``, then the profile
    when it is not ``model`` and the Internet loss when there is one (what tells the runs of
    one ``dticn reproduce`` apart)."""
    from dticn.experiments.world import experiment_profile

    stem = f"{exp.config}-s{exp.seed}"
    profile = experiment_profile(exp).name
    if profile != "model":
        stem += f"-{profile}"
    if exp.loss:
        stem += f"-loss{exp.loss:g}"
    return stem


def run_one(exp: Experiment, pcap_dir: str | None = None) -> dict[str, Any]:
    """Build the world, run it to the horizon, return its metrics row. ``pcap_dir``: write
    the run's LoRa and NDN traces there (``<trace_stem>-lora.pcap``, ``-ndn.pcap``)."""
    from dticn.experiments.metrics import run_metrics
    from dticn.experiments.world import World

    world = World(exp, pcap=None if pcap_dir is None
                  else os.path.join(pcap_dir, trace_stem(exp)))
    try:
        world.run()
    finally:
        world.close_traces()
    row = run_metrics(world)
    row["experiment"] = exp.as_dict()
    return row


def run_many(experiments: Iterable[Experiment], *, workers: int | None = None,
             ray_address: str | None = None, progress: Progress | None = None,
             pcap_dir: str | None = None) -> list[dict[str, Any]]:
    """Run every experiment; rows come back in the order given.

    Args:
        workers: local processes (default: CPU count; 1 runs in this process).
        ray_address: run as Ray tasks instead (``pip install 'dticn[ray]'``): ``local``
            starts Ray on this machine, ``auto`` joins a running one, else a cluster
            address. Rows are the same as local processes give (same seeds).
        progress: ``progress(done, total)`` after each finished run.
        pcap_dir: every run writes its traces there (:func:`run_one`; on Ray, the
            directory of the node that runs it).
    """
    exps = list(experiments)
    if ray_address is not None:
        return _run_ray(exps, ray_address, progress, pcap_dir)
    workers = workers or os.cpu_count() or 1
    results: list[dict[str, Any] | None] = [None] * len(exps)
    if workers <= 1 or len(exps) <= 1:
        for k, exp in enumerate(exps):
            results[k] = run_one(exp, pcap_dir)
            if progress:
                progress(k + 1, len(exps))
    else:
        with ProcessPoolExecutor(max_workers=min(workers, len(exps))) as pool:
            futures = {pool.submit(run_one, exp, pcap_dir): k for k, exp in enumerate(exps)}
            for done, fut in enumerate(as_completed(futures), 1):
                results[futures[fut]] = fut.result()
                if progress:
                    progress(done, len(exps))
    return [r for r in results if r is not None]


def _run_ray(exps: list[Experiment], address: str, progress: Progress | None,
             pcap_dir: str | None = None) -> list[dict[str, Any]]:
    """Each run a Ray task. ``address``: ``local`` starts a Ray instance on this machine
    (and stops it afterwards), ``auto`` joins the one ``ray start`` runs here, anything else
    is a cluster address (``ray://host:10001`` or ``host:6379``; dticn must be installed on
    every node). A Ray already initialised in this process is used as it is."""
    try:
        import ray
    except ImportError:
        raise RayMissing(
            "running on a Ray cluster needs Ray, which is not installed: "
            "pip install 'dticn[ray]' (or run without --ray to use the local cores)"
        ) from None
    started = not ray.is_initialized()
    if started:
        if address == "local":
            ray.init(include_dashboard=False, log_to_driver=False)
        else:
            try:
                ray.init(address=address, log_to_driver=False)
            except ConnectionError as exc:
                raise RayUnreachable(
                    f"no Ray instance at {address!r} ({exc}); start one with "
                    "'ray start --head' (then --ray auto), give its address, or use --ray "
                    "local to start Ray on this machine") from exc
    try:
        remote = ray.remote(run_one)
        refs = [remote.remote(exp, pcap_dir) for exp in exps]
        index = {ref: k for k, ref in enumerate(refs)}
        results: list[dict[str, Any] | None] = [None] * len(exps)
        pending = list(refs)
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            results[index[ready[0]]] = ray.get(ready[0])
            if progress:
                progress(len(exps) - len(pending), len(exps))
    finally:
        if started:
            ray.shutdown()
    return [r for r in results if r is not None]
