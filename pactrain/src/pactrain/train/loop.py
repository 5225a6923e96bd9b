"""One rank's training: model, pruning, DDP, communication method, checkpoint, result.

The loop per step (every rank runs the same sequence), with the per-step calls made by
the hooks of :class:`pactrain.attached.PacTrain`, the object ``pactrain.attach`` returns
(one place for both, so the CLI runs what users run):

1. first training forward: ``tracker.step`` updates masks if the schedule says so,
   verifies them across ranks (repairing a mismatch), zeroes pruned weights and optimizer
   state;
2. ``accumulation`` micro-batches forward/backward, all but the last under ``no_sync()``;
   the last backward runs the method's hook on every DDP bucket;
3. before the optimizer step: zero gradients at pruned positions (a no-op after compacted
   tiers, the masking step of the ``dense`` reference);
4. after it: ``method.on_step_end(step)`` if the method has one (link-model refresh).

Throughput and payload are averaged over the steps after ``warmup_steps`` (DDP rebuilds its
buckets after the first iteration, and the link probe runs at start-up).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from typing import Any

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from pactrain.attached import PacTrain, attach, refuse_another_run
from pactrain.masks import MaskTracker
from pactrain.methods import get_method, method_communicator
from pactrain.models import get_model
from pactrain.train.config import RunConfig
from pactrain.train.heartbeat import Heartbeat
from pactrain.train.held_out import HeldOutCurve
from pactrain.train.optimizers import build_optimizer, default_lr
from pactrain.train.sharding import (
    full_state,
    load_full_state,
    shard_model,
    without_gradient_sync,
)
from pactrain.wire_counters import read_own_counters, wire_per_step

#: What a checkpoint must share with the run that resumes it beyond what ``attach``
#: checks (:data:`pactrain.attached.MUST_MATCH`): the model's weights only fit the model
#: they came from, and the optimizer's state only its optimizer.
RESUME_MUST_MATCH: tuple[str, ...] = ("model", "method", "workers", "sparsity", "optimizer")


def check_resumable(saved_config: str | None, config: RunConfig, world_size: int) -> None:
    """Refuse to continue a checkpoint written by another kind of run, before anything is
    built (the same check as ``attach``'s, :func:`pactrain.attached.refuse_another_run`,
    over the run's own facts too).

    Args:
        saved_config: the checkpoint's ``"config"`` (the writer's RunConfig as JSON);
            ``None`` (older checkpoints) skips the check.
        config: this run; ``world_size`` is its actual group size.

    Raises:
        ResumeError: naming each mismatch and the fix.
    """
    if saved_config is None:
        return
    saved = json.loads(saved_config)
    this = {"model": config.model, "method": config.method, "workers": world_size,
            "sparsity": config.sparsity, "optimizer": config.optimizer}
    saved.setdefault("optimizer", "sgd")  # checkpoints from before the choice were SGD's
    fix = ", ".join(f"{key} {saved.get(key)!r}" for key in RESUME_MUST_MATCH
                    if saved.get(key) != this[key])
    refuse_another_run(saved, this, RESUME_MUST_MATCH,
                       what=f"checkpoint {config.resume} was written by a run",
                       fix=f"resume it with {fix}, or start a new run without resume",
                       this_label="this run")


def training_device(backend: str) -> torch.device:
    """CUDA device ``$LOCAL_RANK`` for NCCL (one GPU per local rank), else the CPU."""
    if backend != "nccl":
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise RuntimeError("backend nccl needs CUDA GPUs and none is visible; use gloo")
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0"))
                          % torch.cuda.device_count())
    torch.cuda.set_device(device)
    return device


def _beat_when_reducing(model: torch.nn.Module, heartbeat: Heartbeat) -> None:
    """Mark the heartbeat ``reducing`` when the first trainable parameter's gradient is
    accumulated: it is the last one backward computes, so from then on this rank only waits
    for the others. A rank that stalls before it is the one the others wait for."""
    first = next((p for p in model.parameters() if p.requires_grad), None)
    if first is not None:
        first.register_post_accumulate_grad_hook(lambda _: heartbeat.reducing())


def train_rank(config: RunConfig, rank: int, world_size: int) -> dict[str, Any]:
    """Train on this rank inside an initialized default process group; return the result.

    Every rank returns the same facts about the model (it holds the same weights); metrics
    of the held-out set are computed on rank 0 only.
    """
    torch.set_num_threads(1)
    spec = get_model(config.model)
    method_spec = get_method(config.method)
    method_spec.check_options(config.method_options)
    batch_size = config.batch_size or spec.default_batch_size
    lr = (config.lr if config.lr is not None
          else default_lr(config.optimizer, spec.default_lr, spec.default_adamw_lr))

    device = training_device(config.backend)
    model = spec.build(config.seed).to(device)  # the same weights on every rank, then moved
    if config.fsdp:
        shard_model(model, config.fsdp_dtype)  # before the optimizer: it replaces them
    optimizer = build_optimizer(config.optimizer, model.parameters(), lr, config.momentum,
                                config.weight_decay)
    checkpoint: dict[str, Any] | None = None
    if config.resume:
        checkpoint = torch.load(config.resume, map_location="cpu", weights_only=False)
        check_resumable(checkpoint.get("config"), config, world_size)
        if config.fsdp:
            load_full_state(model, optimizer, checkpoint["model"], checkpoint["optimizer"])
        else:
            model.load_state_dict(checkpoint["model"])
            optimizer.load_state_dict(checkpoint["optimizer"])

    ddp = model if config.fsdp else DistributedDataParallel(
        model, device_ids=[device.index] if device.type == "cuda" else None,
        gradient_as_bucket_view=config.gradient_as_bucket_view,
        # unset keeps DDP's small first bucket (RunConfig.bucket_cap_mb says why)
        **({} if config.bucket_cap_mb is None else {"bucket_cap_mb": config.bucket_cap_mb}),
        # buffers are still synced once here; RunConfig.broadcast_buffers says why not per step
        forward_sync_buffers=config.broadcast_buffers,
    )
    # the public entry point builds everything a user's loop gets: masks, method, hook,
    # checks, and the per-step hooks (pactrain.attached)
    session = attach(
        ddp, optimizer, sparsity=config.sparsity, total_steps=config.steps,
        method=config.method, prune_start=config.prune_start, prune_end=config.prune_end,
        prune_frequency=config.prune_frequency, prune_initial=config.prune_initial,
        scope=config.prune_scope, prune=config.prune, seed=config.seed,
        error_feedback=config.error_feedback, options=dict(config.method_options),
        state=checkpoint["pactrain"] if checkpoint is not None else None, plan=config.plan,
        refresh_every=config.refresh_every, probe_link=config.probe_link)
    method, tracker = session.method, session.tracker
    start_step = session.step

    stream = spec.batches(rank, world_size, batch_size, config.seed,
                          start_step * config.accumulation)
    end_step = min(config.stop_after or config.steps, config.steps)
    warm_at = min(start_step + config.warmup_steps, end_step)
    clock_start, payload_at_warm, losses = time.perf_counter(), (0, 0), []
    wire_at_warm = read_own_counters()
    payload_since_mask: tuple[int, int] = (0, 0)
    curve = (HeldOutCurve(spec, config.eval_every, config.target_metric,
                          config.train_budget_s) if config.eval_every else None)
    paused_at_warm = 0.0  # evaluation time before the clock started is not subtracted
    cpu_at_warm, paused_cpu_at_warm = time.process_time(), 0.0

    def paused() -> float:
        return curve.paused_s - paused_at_warm if curve is not None else 0.0

    def paused_cpu() -> float:
        return curve.paused_cpu_s - paused_cpu_at_warm if curve is not None else 0.0

    with Heartbeat(config.progress_path, rank, start_step) as heartbeat:
        _beat_when_reducing(model, heartbeat)
        for step in range(start_step, end_step):
            if step == warm_at:
                clock_start = time.perf_counter()
                paused_at_warm = curve.paused_s if curve is not None else 0.0
                cpu_at_warm = time.process_time()
                paused_cpu_at_warm = curve.paused_cpu_s if curve is not None else 0.0
                payload_at_warm = (method.payload.total_bytes, method.payload.steps)
                wire_at_warm = read_own_counters()
            before_step = (method.payload.total_bytes, method.payload.steps)
            optimizer.zero_grad(set_to_none=False)
            step_loss = 0.0
            for micro in range(config.accumulation):
                inputs, targets = (t.to(device, non_blocking=True) for t in next(stream))
                last = micro == config.accumulation - 1
                with contextlib.nullcontext() if last else without_gradient_sync(ddp):
                    loss = spec.loss(ddp(inputs), targets) / config.accumulation
                    loss.backward()
                step_loss += float(loss.detach())
            optimizer.step()  # the session's hooks: mask gradients before, upkeep after
            if session.mask_changed_at == step:
                payload_since_mask = before_step
            losses.append(step_loss)
            heartbeat.beat(step + 1)
            if curve is not None and curve.after_step(
                    step + 1, rank, model, time.perf_counter() - clock_start - paused()):
                end_step = step + 1
                break
    elapsed = time.perf_counter() - clock_start - paused()
    cpu_s = time.process_time() - cpu_at_warm - paused_cpu()
    timed_steps = max(end_step - warm_at, 0)
    wire_end = read_own_counters()

    mask_consistent = True
    if tracker is not None:
        tracker.verify_and_repair(optimizer)
        mask_consistent = tracker.consistent
    result = _result(config, rank, world_size, model, method, tracker, batch_size, lr,
                     elapsed, timed_steps, payload_at_warm, payload_since_mask, losses,
                     start_step, end_step)
    result["mask_consistent"] = mask_consistent
    # this process's CPU (every thread: gloo's too) per timed step, evaluations left out:
    # beside the step's wall time it says whether the host's cores or the link set the step
    result["cpu_s_per_step"] = cpu_s / timed_steps if timed_steps else None
    if curve is not None:
        result.update(curve.result())
    result.update(wire_per_step(wire_at_warm, wire_end, timed_steps))
    if config.evaluate and (rank == 0 or config.fsdp):  # a sharded forward takes every rank
        metrics = spec.evaluate(model)
        if rank == 0:
            result.update({f"final_{k}": v for k, v in metrics.items()})
            result["primary_metric"] = f"final_{spec.primary_metric}"
    if config.checkpoint:
        _save_checkpoint(config.checkpoint, rank, world_size, model, optimizer, session,
                         config)
    return result


def _result(
    config: RunConfig, rank: int, world_size: int, model: torch.nn.Module, method: Any,
    tracker: MaskTracker | None, batch_size: int, lr: float, elapsed: float,
    timed_steps: int, payload_at_warm: tuple[int, int],
    payload_since_mask: tuple[int, int], losses: list[float], start_step: int,
    end_step: int,
) -> dict[str, Any]:
    payload = method.payload
    warm_bytes, warm_steps = payload_at_warm
    mask_bytes, mask_steps = payload_since_mask
    n_steps = payload.steps - warm_steps
    n_final = payload.steps - mask_steps
    dense_bytes = sum(p.numel() * p.element_size() for p in model.parameters()
                      if p.requires_grad)
    pruned_bytes = 0
    if tracker is not None:
        for name, pruned in tracker.pruner.pruned_counts().items():
            pruned_bytes += pruned * tracker.pruner.params[name].element_size()
    samples = timed_steps * batch_size * config.accumulation * world_size
    summary = method.summary()
    payload_per_step = (payload.total_bytes - warm_bytes) / n_steps if n_steps else 0.0
    return {
        "method": config.method,
        "model": config.model,
        "workers": world_size,
        "steps": config.steps,
        "end_step": end_step,
        "start_step": start_step,
        "seed": config.seed,
        "sparsity": config.sparsity,
        "batch_size": batch_size,
        "accumulation": config.accumulation,
        "lr": lr,
        "samples_per_s": samples / elapsed if elapsed > 0 and timed_steps > 0 else 0.0,
        "elapsed_s": elapsed,
        "timed_steps": timed_steps,
        "density": tracker.pruner.density() if tracker else 1.0,
        "compacted_fraction": tracker.pruner.compacted_fraction() if tracker else 0.0,
        "model_density": tracker.pruner.model_density() if tracker else 1.0,
        "payload_bytes_per_step": payload_per_step,
        "final_payload_bytes_per_step":
            (payload.total_bytes - mask_bytes) / n_final if n_final else 0.0,
        "dense_payload_bytes_per_step": float(dense_bytes),
        "ideal_payload_bytes_per_step": float(dense_bytes - pruned_bytes),
        "payload_by_collective": dict(payload.by_collective),
        "payload_by_collective_per_step": {name: count / payload.steps for name, count
                                           in payload.by_collective.items()
                                           } if payload.steps else {},
        "comm_s_per_step": summary.get("comm_s_per_step"),
        "collective_s_per_step": summary.get("collective_s_per_step"),
        "comm_exposed_s_per_step": summary.get("comm_exposed_s_per_step"),
        "control_bytes_per_step": summary.get("control_bytes_per_step"),
        "control_by_collective": (dict(control.by_collective) if (control := getattr(
            method_communicator(method), "control", None)) is not None else {}),
        "total_bytes_per_step": payload_per_step + (summary.get("control_bytes_per_step") or 0.0),
        "final_train_loss": losses[-1] if losses else None,
        "mask_version": tracker.mask_version if tracker else 0,
        "mask_repairs": tracker.repairs if tracker else 0,
        "mask_history": [list(h) for h in tracker.history] if tracker else [],
        "tier_counts": summary.get("tier_counts", {}),
        "operating_point": summary.get("operating_point"),
        "plan": summary.get("plan"),
        "tier_counts_per_bucket": summary.get("tier_counts_per_bucket", {}),
        "method_summary": summary,
    }


def _save_checkpoint(path: str, rank: int, world_size: int, model: torch.nn.Module,
                     optimizer: torch.optim.Optimizer, session: PacTrain,
                     config: RunConfig) -> None:
    """Rank 0 writes model, optimizer and every rank's :meth:`PacTrain.state_dict`
    (gathered): the format ``attach(..., state=checkpoint["pactrain"])`` continues."""
    gathered: list[Any] = [None] * world_size
    dist.all_gather_object(gathered, session.state_dict())
    model_state, optimizer_state = ((full_state(model, optimizer)) if config.fsdp
                                    else (model.state_dict(), optimizer.state_dict()))
    if rank == 0:
        torch.save({
            "model": model_state,
            "optimizer": optimizer_state,
            "pactrain": gathered,
            "config": config.to_json(),
        }, path)
    dist.barrier()
