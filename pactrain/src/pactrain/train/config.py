"""The run description every worker receives as JSON (one object, same on every rank)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any


@dataclass
class RunConfig:
    """One training run.

    Attributes:
        model: registry name in :data:`pactrain.models.MODELS`.
        method: registry name in :data:`pactrain.methods.METHODS`.
        workers: world size (processes).
        steps: optimizer steps of the whole run (the pruning schedule is laid over them).
        stop_after: stop (and checkpoint) after this many steps instead of ``steps``;
            a later ``resume`` with the same ``steps`` continues the same schedule.
        sparsity: final pruning sparsity (0 disables pruning's effect).
        seed: seeds model init, data order and stochastic compression.
        batch_size: per-rank batch size (``None``: the model's default).
        optimizer: ``"sgd"`` (with momentum) or ``"adamw"`` (:mod:`pactrain.train.optimizers`).
        lr: learning rate (``None``: the model's default for ``optimizer``).
        momentum: SGD's momentum (AdamW keeps its default betas).
        weight_decay: both optimizers.
        accumulation: micro-batches per step; all but the last run under ``no_sync()``.
        bucket_cap_mb: DDP bucket size; ``None`` (the default) is PyTorch's own: 25 MB
            buckets after a first one of 1 MiB. Why not pass 25.0: DDP keeps its small
            first bucket only when the cap is left unset; any explicit value makes every
            bucket that size, and a model whose gradient fits in it (fashion-cnn's 13 MB)
            then travels as one bucket handed over at the end of backward, so no
            communication overlaps the rest of backward, for every method.
        gradient_as_bucket_view: passed to DDP. On by default (DDP's is off): the
            gradients are views of DDP's buckets, so the reducer copies no gradient into
            its bucket before the hook nor the result back after it (resnet18: two 45 MB
            copies a step per worker, CPU that the CPU-bound runs of this host share).
            The same numbers either way (the loop keeps the views: ``zero_grad(
            set_to_none=False)``).
        broadcast_buffers: DDP's ``forward_sync_buffers``: rank 0 broadcasts every
            buffer (BatchNorm's running statistics) at each forward. Off by default (DDP's
            own default is on) because it costs every method a blocking broadcast at the
            start of every step (resnet18: 78 KB, 62 ms of a 10 Mbit/s link, outside any
            comm hook) and changes nothing that is computed or measured: BatchNorm in
            training mode normalises by the batch's own statistics, the running ones are
            read only by evaluation, which rank 0 does with its own (which the broadcast
            never overwrites), and checkpoints are rank 0's. DDP still syncs buffers once at
            start-up, so a resumed run starts from rank 0's everywhere either way.
        prune_start, prune_end: fractions of ``steps`` where the pruning schedule runs.
        prune_frequency: steps between mask updates (``None``: about 10 updates).
        prune_initial: sparsity at ``prune_start`` (the cubic schedule's s_i).
            ``None`` for any of the three: ``pactrain.attach``'s choice (the adaptive
            method's operating point, :mod:`pactrain.operating_point`; else 0.1, 0.6, 0).
        prune_scope: how weights are ranked (``pactrain.names.PRUNE_SCOPES``).
        prune: parameter names or ``fnmatch`` patterns to prune (``None``: the default
            rule of :mod:`pactrain.selection`).
        error_feedback: lossy tiers keep a residual (``None``: the method's default).
        refresh_every: the fewest steps between link-model refreshes (paced, see
            :mod:`pactrain.refresh_pacer`).
        probe_link: measure the link at start-up.
        plan: the adaptive policy's decisions of an earlier run to replay (entries of its
            result's ``plan``, :mod:`pactrain.plan`); ``None``: decide from measurements.
        warmup_steps: steps left out of throughput and payload averages.
        method_options: method-specific options (passed to the method factory).
        nodes: the workers split into this many nodes of equal size, numbered node by node
            (each worker's ``LOCAL_RANK`` and ``LOCAL_WORLD_SIZE`` say so, as torchrun's
            do; ``pactrain-hier`` reads them).
        fsdp: shard the model with FSDP2's ``fully_shard`` (:mod:`pactrain.train.sharding`)
            instead of wrapping it in DDP.
        fsdp_dtype: with ``fsdp``, gather parameters and reduce gradients in this dtype
            (``"bf16"``, ``"fp16"``; ``None``: the parameters' own).
        checkpoint: path written at the end (model, optimizer, masks, hook state).
        resume: checkpoint path to continue from.
        json_out: path rank 0 writes the result to.
        progress_path: each rank writes its completed steps to ``progress_path.rank{r}``
            (the launcher draws the bar from rank 0's and names a stalled rank from all).
        timeout_s: collective timeout of the process group.
        backend: ``"gloo"`` (CPU) or ``"nccl"``.
        evaluate: run the model's evaluation at the end (rank 0).
        eval_every: also evaluate on rank 0 every this many steps, with the training clock
            paused (0: only at the end); the result's ``eval_curve`` holds
            (training seconds, steps, metric) points.
        target_metric: with ``eval_every``, stop once the primary metric reaches it.
        train_budget_s: with ``eval_every``, stop at the first evaluation after this much
            training time.
    """

    model: str = "digits-cnn"
    method: str = "pactrain"
    workers: int = 2
    steps: int = 300
    stop_after: int | None = None
    sparsity: float = 0.8
    seed: int = 0
    batch_size: int | None = None
    optimizer: str = "sgd"
    lr: float | None = None
    momentum: float = 0.9
    weight_decay: float = 0.0
    accumulation: int = 1
    bucket_cap_mb: float | None = None
    gradient_as_bucket_view: bool = True
    broadcast_buffers: bool = False
    prune_start: float | None = None
    prune_end: float | None = None
    prune_frequency: int | None = None
    prune_initial: float | None = None
    prune_scope: str = "lamp"
    prune: list[str] | None = None
    nodes: int = 1
    fsdp: bool = False
    fsdp_dtype: str | None = None
    error_feedback: bool | None = None
    refresh_every: int = 50
    probe_link: bool = True
    plan: list[dict[str, Any]] | None = None
    warmup_steps: int = 5
    method_options: dict[str, Any] = field(default_factory=dict)
    checkpoint: str | None = None
    resume: str | None = None
    json_out: str | None = None
    progress_path: str | None = None
    timeout_s: float = 300.0
    backend: str = "gloo"
    evaluate: bool = True
    eval_every: int = 0
    target_metric: float | None = None
    train_budget_s: float | None = None

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunConfig:
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown run-config keys {sorted(unknown)}; known: {sorted(known)}")
        return cls(**data)

    @classmethod
    def load(cls, path: str | Path) -> RunConfig:
        return cls.from_dict(json.loads(Path(path).read_text()))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.to_json())
