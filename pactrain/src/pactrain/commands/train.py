"""`pactrain train`: train a registered model with a registered method on local workers."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from pactrain.names import METHOD_NAMES, MODEL_NAMES, OPTIMIZERS, PRUNE_SCOPES, check_optimizer

#: ``--[no-]gradient-as-bucket-view`` of ``pactrain train`` and ``pactrain bench``
BUCKET_VIEW_HELP = ("Gradients are views of DDP's buckets (no copy into the buckets and back "
                    "each step; the same numbers).")
#: ``--[no-]broadcast-buffers`` of both
BROADCAST_BUFFERS_HELP = (
    "DDP broadcasts rank 0's buffers (BatchNorm statistics) at every forward, its own "
    "default (off: synced once at start-up; rank 0, which evaluates and saves, computes "
    "the same either way, and the wire carries less).")


def check_send_options(method: str, send_density: float | None, send_select: str,
                       rounding: str = "stochastic",
                       error_feedback: bool | None = None) -> None:
    """Refuse a sampling or rounding flag the run cannot honour, before any worker starts.

    Raises:
        typer.BadParameter: a density outside (0, 1], an unknown selection or rounding,
            nearest rounding with error feedback off, or a method that does not sample or
            round (the baselines).
    """
    from pactrain.compaction import check_rounding, check_send_density, check_send_select
    from pactrain.methods import get_method

    if rounding != "stochastic":
        try:
            check_rounding(rounding, error_feedback)
        except ValueError as err:
            raise typer.BadParameter(str(err), param_hint="--rounding") from None
        if "rounding" not in get_method(method).options:
            raise typer.BadParameter(f"{method} sends no ternary codes; the PacTrain methods "
                                     "(pactrain, pactrain-<tier>) do", param_hint="--rounding")
    if send_density is None:
        return

    for check, hint in ((lambda: check_send_density(send_density), "--send-density"),
                        (lambda: check_send_select(send_select, error_feedback),
                         "--send-select")):
        try:
            check()
        except ValueError as err:
            raise typer.BadParameter(str(err), param_hint=hint) from None
    if "send_density" not in get_method(method).options:
        raise typer.BadParameter(f"{method} does not sample inside a mask; the PacTrain "
                                 "methods (pactrain, pactrain-<tier>) do",
                                 param_hint="--send-density")


MODEL_MODULE_HELP = ("A Python file (or module name) that registers a model of your own with "
                     "pactrain.models.register_model (repeatable; the workers import it "
                     "too, through $PACTRAIN_MODEL_MODULES).")


def train(
    model: str = typer.Option("digits-cnn", help=f"One of: {', '.join(MODEL_NAMES)}, or one "
                              "a --model-module registers."),
    model_module: list[str] | None = typer.Option(
        None, help=MODEL_MODULE_HELP),
    method: str = typer.Option("pactrain", help=f"One of: {', '.join(METHOD_NAMES)}."),
    workers: int = typer.Option(2, min=1, help="Worker processes (gloo) on this machine."),
    steps: int = typer.Option(300, min=1, help="Optimizer steps (the schedule's length)."),
    stop_after: int | None = typer.Option(None, help="Stop early (then --checkpoint)."),
    sparsity: float = typer.Option(0.8, min=0.0, max=0.99, help="Final pruning sparsity."),
    prune: list[str] | None = typer.Option(
        None, help="Prune only parameters whose name matches this fnmatch pattern "
                   "(repeatable; default: every weight matrix of a linear map)."),
    prune_start: float | None = typer.Option(
        None, min=0.0, max=1.0, help="Fraction of the run where pruning starts (default: "
        "the adaptive method chooses after timing a step; others 0.1)."),
    prune_end: float | None = typer.Option(
        None, min=0.0, max=1.0, help="Fraction of the run where the final sparsity is "
        "reached (default: chosen, as --prune-start; others 0.6)."),
    prune_initial: float | None = typer.Option(
        None, min=0.0, max=0.99, help="Sparsity pruned at once at --prune-start (default: "
        "chosen, as --prune-start; others 0)."),
    prune_scope: str = typer.Option(
        PRUNE_SCOPES[0],
        help=f"How weights are ranked for pruning: {', '.join(PRUNE_SCOPES)} (LAMP scores "
             "over all layers, |w| over all, |w| per layer)."),
    seed: int = typer.Option(0, help="Seeds model init, data order and compression."),
    batch_size: int | None = typer.Option(None, help="Per-worker batch (default: model's)."),
    optimizer: str = typer.Option(
        OPTIMIZERS[0], help=f"{' or '.join(OPTIMIZERS)}: SGD with momentum 0.9, or AdamW "
        "(what transformers are usually trained with)."),
    lr: float | None = typer.Option(
        None, help="Learning rate (default: the model's for --optimizer)."),
    accumulation: int = typer.Option(1, min=1, help="Micro-batches per step (no_sync)."),
    bucket_cap_mb: float | None = typer.Option(
        None, min=0.0001, help="DDP bucket size in MB (default: PyTorch's, 25 MB after a "
                               "first bucket of 1 MiB; any value makes every bucket that size)."),
    gradient_as_bucket_view: bool = typer.Option(True, help=BUCKET_VIEW_HELP),
    broadcast_buffers: bool = typer.Option(False, help=BROADCAST_BUFFERS_HELP),
    fsdp: bool = typer.Option(False, help="Shard the model with FSDP2's fully_shard (each "
                              "block, then the root) instead of DDP; its all-gather and "
                              "reduce-scatter carry kept entries only. Methods: "
                              "pactrain, pactrain-fp32, dense."),
    fsdp_dtype: str | None = typer.Option(
        None, help="With --fsdp: gather parameters and reduce gradients in bf16 or fp16 "
        "(FSDP2's MixedPrecisionPolicy; weights and optimizer stay fp32)."),
    error_feedback: bool | None = typer.Option(
        None, "--error-feedback/--no-error-feedback",
        help="Residuals for lossy compression (default: the method's own: off for PacTrain's "
             "tiers unless --send-density or --rounding nearest, on for top-k and "
             "PowerSGD)."),
    json_out: str | None = typer.Option(
        None, "--json", help="Write the whole result here ('-': to stdout, instead of the "
                             "summary; progress and logs always go to stderr)."),
    checkpoint: Path | None = typer.Option(None, help="Save model/optimizer/hook state here."),
    resume: Path | None = typer.Option(None, help="Continue from this checkpoint."),
    timeout: float = typer.Option(3600.0, help="Kill all workers after this many seconds."),
    backend: str = typer.Option("gloo", help="gloo (CPU) or nccl (one CUDA GPU per worker)."),
    collective_timeout: float = typer.Option(
        300.0, min=1.0, help="Seconds a collective waits for a stalled rank before the run "
                             "fails (the error names the rank)."),
    log_dir: Path | None = typer.Option(None, help="Keep each rank's log (tier decisions)."),
    data_dir: Path | None = typer.Option(
        None, help="Folder of a model's dataset files (Fashion-MNIST's four IDX files); "
                   "default $PACTRAIN_DATA, else /usr/share/datasets/fashion-mnist."),
    eval_every: int = typer.Option(0, min=0, help="Also evaluate every N steps (training "
                                   "clock paused); 0: only at the end."),
    target: float | None = typer.Option(None, help="With --eval-every: stop once the "
                                        "held-out metric (e.g. accuracy) reaches this."),
    train_budget: float | None = typer.Option(None, help="With --eval-every: stop after "
                                              "this many seconds of training."),
    send_density: float | None = typer.Option(
        None, min=0.0, max=1.0, help="PacTrain methods: send at most this share of each "
        "bucket's entries per step (an agreed sample of the kept ones, the rest waits in "
        "the error-feedback residual); default: every kept entry."),
    send_select: str = typer.Option(
        "topk", help="With --send-density: topk (each parameter's chunks of 256 kept "
        "entries with the largest group-wide max |v|), topk-ahead (the same pick and the "
        "codes' scales from maxima agreed a step ahead: no round trip waits in the step) "
        "or cyclic (every s-th kept entry in turn)."),
    rounding: str = typer.Option(
        "stochastic", help="PacTrain's ternary tiers: stochastic (unbiased codes) or nearest "
        "(|v| > scale/2; what it rounds away waits in the error-feedback residual, which "
        "it turns on)."),
    plan: Path | None = typer.Option(
        None, help="Replay the tier decisions of an earlier --method pactrain run (its "
                   "--json result, or its 'plan' list): the same tiers at the same steps, "
                   "nothing measured, so the run repeats exactly."),
) -> None:
    """Train MODEL with METHOD on WORKERS local gloo processes and print the result."""
    from pactrain.models import get_model
    from pactrain.train.config import RunConfig
    from pactrain.train.launch import run_training

    if backend not in ("gloo", "nccl"):
        raise typer.BadParameter(f"{backend!r}: choose gloo or nccl", param_hint="--backend")
    load_model_modules(model_module)
    try:  # before any worker starts
        get_model(model)
    except KeyError as err:
        raise typer.BadParameter(str(err.args[0]), param_hint="--model") from None
    check_methods([method], optimizer, flag="--method")
    if fsdp_dtype is not None and not fsdp:
        raise typer.BadParameter("--fsdp-dtype needs --fsdp", param_hint="--fsdp-dtype")
    if fsdp:
        from pactrain.fsdp.method import FSDP_METHODS

        if method not in FSDP_METHODS:
            raise typer.BadParameter(f"{method!r} has no FSDP2 form; with --fsdp use one of "
                                     f"{', '.join(FSDP_METHODS)}", param_hint="--method")
        from pactrain.train.sharding import FSDP_DTYPES

        if fsdp_dtype is not None and fsdp_dtype not in FSDP_DTYPES:
            raise typer.BadParameter(f"{fsdp_dtype!r}: choose one of {', '.join(FSDP_DTYPES)}",
                                     param_hint="--fsdp-dtype")
        if eval_every or plan is not None or send_density is not None:
            raise typer.BadParameter("--fsdp trains with the schedule and evaluates at the "
                                     "end; --eval-every, --plan and --send-density are "
                                     "for DDP runs", param_hint="--fsdp")
    check_send_options(method, send_density, send_select, rounding, error_feedback)
    if prune_scope not in PRUNE_SCOPES:
        raise typer.BadParameter(f"{prune_scope!r}: choose one of {', '.join(PRUNE_SCOPES)}",
                                 param_hint="--prune-scope")
    require_data([model], data_dir)
    replay = None
    if plan is not None:
        from pactrain.plan import PlanError, load_plan
        from pactrain.tiers import TIER_NAMES

        if method != "pactrain":
            raise typer.BadParameter(f"a plan replays the adaptive policy's decisions; use "
                                     f"--method pactrain, not {method}", param_hint="--plan")
        try:
            replay = load_plan(plan, TIER_NAMES)
        except PlanError as err:
            raise typer.BadParameter(str(err), param_hint="--plan") from None

    config = RunConfig(
        model=model, method=method, workers=workers, steps=steps, stop_after=stop_after,
        sparsity=sparsity, prune=list(prune) if prune else None, prune_scope=prune_scope,
        prune_start=prune_start, prune_end=prune_end, prune_initial=prune_initial,
        seed=seed, batch_size=batch_size, optimizer=optimizer, lr=lr,
        accumulation=accumulation,
        bucket_cap_mb=bucket_cap_mb, broadcast_buffers=broadcast_buffers,
        gradient_as_bucket_view=gradient_as_bucket_view, fsdp=fsdp, fsdp_dtype=fsdp_dtype,
        error_feedback=error_feedback,
        json_out=json_out if json_out not in (None, "-") else None,
        timeout_s=collective_timeout, backend=backend,
        checkpoint=str(checkpoint) if checkpoint else None,
        resume=str(resume) if resume else None,
        eval_every=eval_every, target_metric=target, train_budget_s=train_budget,
        plan=replay,
        method_options={**({"send_density": send_density, "send_select": send_select}
                           if send_density is not None else {}),
                        **({"rounding": rounding} if rounding != "stochastic" else {})},
    )
    if prune_start is not None and prune_end is not None and prune_end < prune_start:
        raise typer.BadParameter(f"{prune_end} is before --prune-start {prune_start}; the "
                                 "schedule's end must be at or after its start",
                                 param_hint="--prune-end")
    if (target is not None or train_budget is not None) and not eval_every:
        raise typer.BadParameter("--target and --train-budget need --eval-every N")
    result = run_training(config, timeout_s=timeout, log_dir=log_dir)
    keys = ("method", "model", "workers", "steps", "samples_per_s", "density",
            "compacted_fraction",
            "payload_bytes_per_step", "control_bytes_per_step", "total_bytes_per_step",
            "dense_payload_bytes_per_step", "comm_s_per_step", "comm_exposed_s_per_step",
            "final_test_accuracy", "final_test_loss", "mask_consistent", "tier_counts",
            "operating_point", "eval_curve", "reached_s", "reached_step")
    for line in (result.get("operating_point") or {}).get("reasons", []):
        typer.echo(f"policy: {line}", err=True)  # one line per decision, beside the JSON
    if json_out == "-":
        typer.echo(json.dumps(result, indent=2))
        return
    summary = {k: result[k] for k in keys if k in result}
    if result.get("ideal_payload_bytes_per_step"):
        # the steady state after the last mask change, against density x dense
        summary["final_payload_bytes_per_step"] = result["final_payload_bytes_per_step"]
        summary["ideal_payload_bytes_per_step"] = result["ideal_payload_bytes_per_step"]
        summary["final_payload_vs_ideal"] = (result["final_payload_bytes_per_step"]
                                             / result["ideal_payload_bytes_per_step"])
    typer.echo(json.dumps(summary, indent=2))


def check_methods(methods: list[str], optimizer: str, flag: str) -> None:
    """Refuse an unknown optimizer or method, or a method that cannot train under the
    optimizer (DGC under AdamW), in one line before any worker starts.

    Raises:
        typer.BadParameter: naming the flag (``flag`` for the method names) and the fix.
    """
    from pactrain.methods import get_method

    try:
        check_optimizer(optimizer)
    except ValueError as err:
        raise typer.BadParameter(str(err), param_hint="--optimizer") from None
    for method in methods:
        try:
            spec = get_method(method)
        except KeyError as err:
            raise typer.BadParameter(str(err.args[0]), param_hint=flag) from None
        try:
            spec.check_optimizer(optimizer)
        except ValueError as err:
            raise typer.BadParameter(str(err), param_hint="--optimizer") from None


def load_model_modules(entries: list[str] | None) -> None:
    """Import the ``--model-module`` files here and for the workers; exit 2 with one line
    when one is missing or fails to import."""
    if not entries:
        return
    from pactrain.models import add_model_modules

    try:
        add_model_modules(entries)
    except (ImportError, FileNotFoundError) as err:
        raise typer.BadParameter(f"{err}", param_hint="--model-module") from None
    except Exception as err:  # the user's own code: say where, in one line
        raise typer.BadParameter(f"importing {', '.join(entries)} failed: "
                                 f"{type(err).__name__}: {err}",
                                 param_hint="--model-module") from None


def require_data(models: list[str], data_dir: Path | None) -> None:
    """Exit 2 with one line when a model's dataset is missing, before any worker starts."""
    from pactrain.models import check_data

    try:
        check_data(models, None if data_dir is None else str(data_dir))
    except KeyError as err:
        raise typer.BadParameter(str(err.args[0]), param_hint="--model") from None
    except FileNotFoundError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from None


def register(app: typer.Typer) -> None:
    """Add `train` to the CLI."""
    app.command("train")(train)
