"""`pactrain train`: train a registered model with a registered method on local workers."""

from __future__ import annotations

import json
from pathlib import Path

import typer


def train(
    model: str = typer.Option("digits-cnn", help="Model name (see docs/pactrain-core.md)."),
    method: str = typer.Option("pactrain", help="dense, pactrain, pactrain-fp32, ..."),
    workers: int = typer.Option(2, min=1, help="Worker processes (gloo) on this machine."),
    steps: int = typer.Option(300, min=1, help="Optimizer steps (the schedule's length)."),
    stop_after: int | None = typer.Option(None, help="Stop early (then --checkpoint)."),
    sparsity: float = typer.Option(0.8, min=0.0, max=0.99, help="Final pruning sparsity."),
    seed: int = typer.Option(0, help="Seeds model init, data order and compression."),
    batch_size: int | None = typer.Option(None, help="Per-worker batch (default: model's)."),
    lr: float | None = typer.Option(None, help="SGD learning rate (default: model's)."),
    accumulation: int = typer.Option(1, min=1, help="Micro-batches per step (no_sync)."),
    bucket_cap_mb: float = typer.Option(25.0, help="DDP bucket size in MB."),
    broadcast_buffers: bool = typer.Option(
        True, help="DDP broadcasts rank 0's buffers (BatchNorm statistics) every forward."),
    error_feedback: bool | None = typer.Option(
        None, "--error-feedback/--no-error-feedback",
        help="Residuals for lossy compression (default: the method's own: off for PacTrain's "
             "tiers, on for top-k and PowerSGD)."),
    json_out: Path | None = typer.Option(None, "--json", help="Write the result here."),
    checkpoint: Path | None = typer.Option(None, help="Save model/optimizer/hook state here."),
    resume: Path | None = typer.Option(None, help="Continue from this checkpoint."),
    timeout: float = typer.Option(3600.0, help="Kill all workers after this many seconds."),
    log_dir: Path | None = typer.Option(None, help="Keep each rank's log (tier decisions)."),
    eval_every: int = typer.Option(0, min=0, help="Also evaluate every N steps (training "
                                   "clock paused); 0: only at the end."),
    target: float | None = typer.Option(None, help="With --eval-every: stop once the "
                                        "held-out metric (e.g. accuracy) reaches this."),
    train_budget: float | None = typer.Option(None, help="With --eval-every: stop after "
                                              "this many seconds of training."),
) -> None:
    """Train MODEL with METHOD on WORKERS local gloo processes and print the result."""
    from pactrain.train.config import RunConfig
    from pactrain.train.launch import run_training

    config = RunConfig(
        model=model, method=method, workers=workers, steps=steps, stop_after=stop_after,
        sparsity=sparsity,
        seed=seed, batch_size=batch_size, lr=lr, accumulation=accumulation,
        bucket_cap_mb=bucket_cap_mb, broadcast_buffers=broadcast_buffers,
        error_feedback=error_feedback,
        json_out=str(json_out) if json_out else None,
        checkpoint=str(checkpoint) if checkpoint else None,
        resume=str(resume) if resume else None,
        eval_every=eval_every, target_metric=target, train_budget_s=train_budget,
    )
    if (target is not None or train_budget is not None) and not eval_every:
        raise typer.BadParameter("--target and --train-budget need --eval-every N")
    result = run_training(config, timeout_s=timeout, log_dir=log_dir)
    keys = ("method", "model", "workers", "steps", "samples_per_s", "density",
            "payload_bytes_per_step", "dense_payload_bytes_per_step",
            "final_test_accuracy", "final_test_loss", "mask_consistent", "tier_counts",
            "eval_curve", "reached_s", "reached_step")
    typer.echo(json.dumps({k: result[k] for k in keys if k in result}, indent=2))


def register(app: typer.Typer) -> None:
    """Add `train` to the CLI."""
    app.command("train")(train)
