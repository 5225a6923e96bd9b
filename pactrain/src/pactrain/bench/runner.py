"""Run the grid: one :func:`pactrain.train.launch.run_training` call per cell, one row each.

Every row is measured by the training loop itself: samples/s over the timed steps, the
hook's payload per step (from its :class:`pactrain.accounting.PayloadCounter`) and, when
the workers live in namespaces, the bytes rank 0's ``eth0`` sent per step over the same
steps. Derived columns (speed-up, ratio to the ideal) are added by :mod:`.report`.
"""

from __future__ import annotations

import os
import platform
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pactrain.bench.config import BenchConfig, Cell
from pactrain.bench.network import BenchNetwork
from pactrain.bench.report import shown_method
from pactrain.train.config import RunConfig
from pactrain.train.launch import TrainingTimeoutError, WorkerFailedError, run_training

if TYPE_CHECKING:
    from pactrain.models import ModelSpec
    from pactrain.registry import Registry

Row = dict[str, Any]


def run_config(config: BenchConfig, cell: Cell, **overrides: Any) -> RunConfig:
    """The training run of ``cell``: one-shot pruning at step 0, the bench's sizes."""
    base = RunConfig(
        model=cell.model, method=cell.method, workers=config.workers, steps=config.steps,
        sparsity=config.sparsity, seed=config.seed, batch_size=config.batch_size,
        optimizer=config.optimizer, warmup_steps=config.warmup_steps, prune_start=0.0,
        prune_end=0.0,
        method_options=config.method_options(cell.method), timeout_s=config.run_timeout_s,
        bucket_cap_mb=config.bucket_cap_mb, broadcast_buffers=config.broadcast_buffers,
        gradient_as_bucket_view=config.gradient_as_bucket_view, fsdp=config.fsdp,
        nodes=config.nodes,
        fsdp_dtype=config.fsdp_dtype,
    )
    for key, value in overrides.items():
        setattr(base, key, value)
    return base


def host_cores() -> int:
    """Cores this process may run on: the bench's workers share them (every namespace is
    on this host)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
        os.cpu_count() or 1)


def row_from_result(cell: Cell, label: str, result: dict[str, Any]) -> Row:
    """The JSON row of one finished run (fields documented in :mod:`.report`)."""
    accuracy = result.get("final_test_accuracy")
    return {
        "model": cell.model,
        "method": cell.method,
        "bandwidth": label,
        "repeat": cell.repeat,
        "workers": result["workers"],
        "sparsity": result["sparsity"],
        "batch_size": result["batch_size"],
        "steps": result["steps"],
        "timed_steps": result["timed_steps"],
        "samples_per_s": result["samples_per_s"],
        "elapsed_s": result["elapsed_s"],
        "payload_bytes_per_step": result["payload_bytes_per_step"],
        "payload_by_collective_per_step": result.get("payload_by_collective_per_step", {}),
        "dense_payload_bytes_per_step": result["dense_payload_bytes_per_step"],
        "wire_bytes_per_step": result.get("wire_tx_bytes_per_step"),
        "wire_rx_bytes_per_step": result.get("wire_rx_bytes_per_step"),
        "accuracy": accuracy,
        "perplexity": result.get("final_perplexity"),
        "final_train_loss": result.get("final_train_loss"),
        "density": result.get("density"),
        "comm_s_per_step": result.get("comm_s_per_step"),
        "collective_s_per_step": result.get("collective_s_per_step"),
        "control_bytes_per_step": result.get("control_bytes_per_step"),
        "total_bytes_per_step": result.get("total_bytes_per_step"),
        "cpu_s_per_step": result.get("cpu_s_per_step"),
        "host_cores": host_cores(),
        "tier_counts": result.get("tier_counts", {}),
        "error": None,
    }


def failed_row(cell: Cell, label: str, config: BenchConfig, error: str) -> Row:
    """A row for a run that failed or timed out: measured fields are ``None``."""
    return {
        "model": cell.model, "method": cell.method, "bandwidth": label,
        "repeat": cell.repeat, "workers": config.workers, "sparsity": config.sparsity,
        "batch_size": config.batch_size, "steps": config.steps, "samples_per_s": None,
        "payload_bytes_per_step": None, "wire_bytes_per_step": None, "accuracy": None,
        "perplexity": None, "error": error,
    }


def run_cell(config: BenchConfig, cell: Cell, network: BenchNetwork) -> Row:
    """Shape the links for ``cell`` and run it; failures become rows with ``error``."""
    network.shape(cell.bandwidth)
    label = network.label(cell.bandwidth)
    started = time.perf_counter()
    try:
        result = run_training(
            run_config(config, cell), command_prefix_for_rank=network.prefix,
            master_addr=network.master_addr, timeout_s=config.run_timeout_s, progress=False,
        )
    except (WorkerFailedError, TrainingTimeoutError) as err:
        return failed_row(cell, label, config, str(err)[-2000:])
    row = row_from_result(cell, label, result)
    row["run_wall_s"] = time.perf_counter() - started  # with process start-up and eval
    return row


@dataclass
class Curve:
    """Test accuracy of one (model, method, bandwidth) against its training wall time."""

    model: str
    method: str
    bandwidth: str  # tc rate, or "loopback" when unthrottled (as in the rows)
    points: list[tuple[float, int, float]] = field(default_factory=list)  # (s, step, acc)
    reached_s: float | None = None
    reached_step: int | None = None
    target: float | None = None  # the test accuracy (or held-out loss) raced to
    metric: str = "test_accuracy"  # what the points' third field is
    payload_bytes_per_step: float | None = None  # averaged over the whole race
    wire_bytes_per_step: float | None = None
    control_bytes_per_step: float | None = None  # the policy's and the hook's agreements
    error: str | None = None
    sparsity: float = 0.0  # the run's pruning target (the ``dense`` entrant prunes too)
    operating_point: dict[str, Any] | None = None  # what the adaptive method chose


def race_target(config: BenchConfig, spec: ModelSpec) -> float | None:
    """The target ``spec`` races to: the accuracy target for classifiers, the loss target
    for language models that report a held-out loss (``None``: not in the race)."""
    if spec.primary_metric == "test_accuracy":
        return config.time_to_accuracy
    if spec.primary_metric == "test_loss":
        return config.time_to_loss
    return None


def race_to_accuracy(
    config: BenchConfig, model: str, method: str, network: BenchNetwork,
    bandwidth: str | None, target: float | None = None, metric: str = "test_accuracy",
    overrides: dict[str, Any] | None = None,
) -> Curve:
    """Train ``model`` under ``method`` at ``bandwidth`` until its held-out metric reaches
    ``target`` (default: the accuracy target; a loss target for language models).

    1. Shape the links to ``bandwidth``.
    2. One training run of at most ``tta_max_steps`` at the race's batch size
       (``tta_batch_size``, else the model's default, the batch its default lr suits);
       pruning (for the methods that prune) follows the gradual schedule from step 0 to
       ``tta_prune_end`` x ``tta_max_steps``, or, unset, the method's own.
    3. Every ``tta_eval_every`` steps rank 0 evaluates on the held-out set with the
       training clock paused (:class:`pactrain.train.held_out.HeldOutCurve`); the point
       (training s, step, accuracy) joins the curve; all ranks stop together at the
       target, after ``tta_budget_s`` seconds of training, or at ``tta_max_steps``.

    Wall time is training time only (process start-up, the link probe and evaluations
    excluded), from the first step: DDP's bucket rebuild and every warm-up count. A
    failed run ends the curve with ``error`` set. ``overrides``: fields of this
    entrant's :class:`~pactrain.train.config.RunConfig` set last (a benchmark racing
    differently configured entrants of one method).
    """
    target = config.time_to_accuracy if target is None else target
    if target is None:
        raise ValueError("race_to_accuracy needs a target: set time_to_accuracy "
                         "(--time-to-accuracy 0.95)")
    network.shape(bandwidth)
    curve = Curve(model, method, network.label(bandwidth), target=target, metric=metric,
                  sparsity=config.sparsity)
    cell = Cell(model, method, bandwidth, 0)
    unset = config.tta_prune_end is None and config.tta_prune_initial is None
    schedule = {"prune_start": None if unset else 0.0, "prune_end": config.tta_prune_end,
                "prune_initial": config.tta_prune_initial}
    run = run_config(config, cell, **{
        "steps": config.tta_max_steps, "warmup_steps": 0,
        "batch_size": config.tta_batch_size, **schedule,
        "eval_every": config.tta_eval_every, "target_metric": target,
        "train_budget_s": config.tta_budget_s, "evaluate": False, **(overrides or {})})
    try:
        result = run_training(run, command_prefix_for_rank=network.prefix,
                              master_addr=network.master_addr,
                              timeout_s=race_timeout_s(config), progress=False)
    except (WorkerFailedError, TrainingTimeoutError) as err:
        curve.error = str(err)[-2000:]
        return curve
    curve.points = [tuple(point) for point in result["eval_curve"]]
    curve.reached_s, curve.reached_step = result["reached_s"], result["reached_step"]
    curve.payload_bytes_per_step = result["payload_bytes_per_step"]
    curve.wire_bytes_per_step = result.get("wire_tx_bytes_per_step")
    curve.control_bytes_per_step = result.get("control_bytes_per_step")
    curve.operating_point = result.get("operating_point")
    return curve


def race_timeout_s(config: BenchConfig) -> float:
    """Seconds before a race entrant is killed: ``run_timeout_s`` for what is not
    training (start-up, DDP's first broadcast, evaluations) on top of the entrant's
    training budget ``tta_budget_s``.

    Why not ``run_timeout_s`` alone: at 10 Mbit/s on a slow host a PowerSGD entrant within
    its 1400 s budget also spends minutes starting (DDP broadcasts the 45 MB model over
    the shaped link) and evaluating, and a 1800 s timeout killed it with its whole curve
    (resnet18, 2026-12-07).
    """
    return config.run_timeout_s + (config.tta_budget_s or 0.0)


def race_line(curve: Curve) -> str:
    """One log line per entrant: when it reached the target, or where it ended."""
    where = (f"time to accuracy {curve.model} {curve.bandwidth} "
             f"{shown_method(curve.method, curve.sparsity)}: ")
    if curve.error:
        return where + "failed: " + curve.error.splitlines()[0]
    if curve.reached_s is not None:
        return where + f"{curve.reached_s:.1f} s (step {curve.reached_step})"
    last = curve.points[-1] if curve.points else None
    shown = (lambda v: f"{100 * v:.1f}%") if curve.metric == "test_accuracy" else (
        lambda v: f"loss {v:.3f}")
    return where + ("not reached" + (f", {shown(last[2])} after {last[0]:.0f} s "
                                     f"(step {last[1]})" if last else ""))


def race_models(config: BenchConfig, models: Registry[ModelSpec]) -> list[str]:
    """The models of ``config`` that have a target (the race's entrants): classifiers with
    ``--time-to-accuracy``, language models reporting a held-out loss with
    ``--time-to-loss``. The others stay in the grid but not in the race. Raises if a
    target has no entrant, naming the fix.
    """
    entrants = [m for m in config.models if race_target(config, models.get(m)) is not None]
    kinds = {"test_accuracy": ("--time-to-accuracy", config.time_to_accuracy,
                               "a classifier (e.g. fashion-cnn, resnet18)"),
             "test_loss": ("--time-to-loss", config.time_to_loss,
                           "a language model with a held-out loss (lm-gpt, hf-gpt2)")}
    for metric, (flag, target, example) in kinds.items():
        if target is not None and not any(models.get(m).primary_metric == metric
                                          for m in entrants):
            raise ValueError(f"{flag} needs {example}, but --models "
                             f"{','.join(config.models)} has none")
    return entrants


def environment(config: BenchConfig, network: BenchNetwork) -> dict[str, Any]:
    """Facts needed to read the numbers: machine, versions, network, what was unthrottled."""
    import torch

    from pactrain import __version__
    from pactrain.rates import tbf_burst_bytes

    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, cwd=Path(__file__).parent).stdout.strip() or None
    except OSError:
        commit = None
    return {
        "pactrain": __version__,
        "git_commit": commit,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "kernel": platform.release(),
        "cpus": host_cores(),
        "cpu_model": cpu_model(),
        "load_avg_1_5_15": list(os.getloadavg()),  # read as the bench ends
        "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "throttled": network.throttled,
        "unthrottled_reason": network.reason or None,
        "network": (
            "one network namespace per worker, veth to a bridge in a hub namespace, "
            "tc tbf on both directions of each worker link; no delay emulation "
            "(sch_netem unavailable)" if network.throttled
            else "loopback, unthrottled: " + network.reason
        ),
        "tbf_burst_bytes": {
            bw: tbf_burst_bytes(_bits(bw)) for bw in config.bandwidths if bw
        } if network.throttled else {},
        "wire_bytes": "tx bytes of rank 0's eth0 per timed step (interface counters)",
        "payload_bytes": "bytes handed to collectives per rank per step (hook's count)",
        "config": config.to_dict(),
    }


def cpu_model() -> str | None:
    """The host's processor as ``/proc/cpuinfo`` names it (``None`` where it does not).

    Why: two machines of the same shared host class differed by up to 60% in CPU time a
    step (PowerSGD rank 1 on resnet18: 0.29-0.31 s against 0.41-0.46 s), which moves the
    ratio of a CPU-bound method to a link-bound one; the model name tells them apart."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _bits(bandwidth: str) -> int:
    from pactrain.rates import parse_rate

    return parse_rate(bandwidth)


def run_bench(
    config: BenchConfig, want_throttle: bool = True, console: Any = None,
    on_row: Callable[[list[Row]], None] | None = None,
    on_curve: Callable[[list[Row], list[dict[str, Any]]], None] | None = None,
) -> dict[str, Any]:
    """Run the whole grid (and the time-to-accuracy race) with a progress bar.

    Returns ``{"rows", "environment", "curves"}`` (see :mod:`pactrain.bench.report`).
    ``on_row(rows_so_far)`` runs after every run, e.g. to save partial results of a long
    grid, and ``on_curve(rows, curves_so_far)`` after every race entrant (a race of four
    entrants takes hours at 10 Mbit/s; a bench stopped in the third keeps the first two
    curves). The topology is torn down on return, on Ctrl-C, on SIGTERM and on failure.
    """
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from pactrain.bench.network import bench_network
    from pactrain.bench.report import add_derived
    from pactrain.methods import load_builtin_methods
    from pactrain.models import load_builtin_models

    console = console or Console()
    models, methods = load_builtin_models(), load_builtin_methods()
    for name in config.models:
        models.get(name)  # KeyError naming the choices
    for name in config.methods:
        methods.get(name)
    cells = config.cells()
    racing = config.time_to_accuracy is not None or config.time_to_loss is not None
    racers = race_models(config, models) if racing else []
    race = config.race_cells(racers)
    rows: list[Row] = []
    curves: list[Curve] = []
    with bench_network(config.workers, want_throttle, config.nodes) as network:
        if not network.throttled:
            console.print(f"[bold red]Running UNTHROTTLED on loopback[/]: {network.reason}. "
                          "Bandwidths are ignored; numbers show compute and hook overheads "
                          "only.")
        bar = Progress("[bold]{task.description}", BarColumn(), MofNCompleteColumn(),
                       TimeElapsedColumn(), TimeRemainingColumn(), console=console)
        with bar:
            grid = bar.add_task("grid", total=len(cells))
            for cell in cells:
                label = network.label(cell.bandwidth)
                bar.update(grid, description=f"{cell.model} {label} {cell.method}")
                row = run_cell(config, cell, network)
                rows.append(row)
                if on_row is not None:
                    on_row(add_derived(rows))
                if row["error"]:
                    console.print(f"[red]{cell.model}/{cell.method}/{label} failed:[/] "
                                  f"{row['error'].splitlines()[0]}")
                elif not console.is_terminal:  # logs get one line per run instead of a bar
                    console.print(f"{cell.model} {label} {cell.method}: "
                                  f"{row['samples_per_s']:.2f} samples/s")
                bar.advance(grid)
            if race:
                left_out = sorted(set(config.models) - set(racers))
                if left_out:
                    console.print(f"time to accuracy: {', '.join(left_out)} left out "
                                  "(no target for its metric)")
                task = bar.add_task("time to accuracy", total=len(race))
                raced: set[tuple[str, str, str]] = set()
                for cell in race:
                    label = network.label(cell.bandwidth)
                    if (cell.model, label, cell.method) not in raced:  # unthrottled: one
                        raced.add((cell.model, label, cell.method))    # loopback, run once
                        bar.update(task, description=f"time to accuracy: {cell.model} "
                                                     f"{label} {cell.method}")
                        spec = models.get(cell.model)
                        curve = race_to_accuracy(config, cell.model, cell.method, network,
                                                 cell.bandwidth, race_target(config, spec),
                                                 spec.primary_metric)
                        curves.append(curve)
                        console.print(race_line(curve))
                        if on_curve is not None:
                            on_curve(add_derived(rows), [vars(c) for c in curves])
                    bar.advance(task)
        env = environment(config, network)
    return {"rows": add_derived(rows), "environment": env,
            "curves": [vars(c) for c in curves]}
