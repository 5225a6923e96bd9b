"""`pactrain bench`: every method side by side on real processes and throttled links."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from pactrain.commands.train import (
    BROADCAST_BUFFERS_HELP,
    BUCKET_VIEW_HELP,
    MODEL_MODULE_HELP,
    check_methods,
    check_send_options,
    load_model_modules,
    require_data,
)
from pactrain.names import OPTIMIZERS


def _split(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def bench(
    models: str = typer.Option("digits-cnn,resnet18", help="Comma-separated model names."),
    model_module: list[str] | None = typer.Option(None, help=MODEL_MODULE_HELP),
    methods: str = typer.Option("dense,fp16,powersgd,topk,dgc,terngrad,pactrain",
                                help="Comma-separated method names."),
    workers: int = typer.Option(4, help="Worker processes, one network namespace each."),
    nodes: int = typer.Option(1, min=1, help="Split the workers into this many nodes: "
                              "unshaped links inside a node, --bandwidth on each node's "
                              "one uplink (two-level clusters; pactrain-hier uses it)."),
    fsdp: bool = typer.Option(False, help="Shard each run's model with FSDP2 instead of "
                              "DDP (methods: pactrain, pactrain-fp32, dense)."),
    bandwidth: str = typer.Option("100mbit", help="Comma-separated tc rates per worker link "
                                  "(e.g. 10mbit,100mbit,1gbit); 'none' for unshaped links."),
    batch_size: int = typer.Option(8, help="Batch size per worker."),
    steps: int = typer.Option(30, help="Steps per run."),
    warmup_steps: int = typer.Option(5, help="Leading steps left out of the timing."),
    sparsity: float = typer.Option(0.8, help="PacTrain's sparsity; top-k/DGC keep 1 - it."),
    repeats: int = typer.Option(1, help="Passes over the grid (method order rotates)."),
    powersgd_rank: int = typer.Option(4, help="PowerSGD matrix approximation rank."),
    topk_density: float | None = typer.Option(None, help="Fraction kept by top-k and DGC "
                                              "(default: 1 - sparsity)."),
    send_density: float | None = typer.Option(
        None, min=0.0, max=1.0, help="PacTrain methods: send at most this share of each "
        "bucket's entries per step (agreed sampling inside the mask, error feedback)."),
    send_select: str = typer.Option(
        "topk", help="With --send-density: topk (agreed top chunks), topk-ahead (agreed a "
        "step ahead) or cyclic."),
    rounding: str = typer.Option(
        "stochastic", help="PacTrain's ternary tiers: stochastic or nearest (with error "
        "feedback)."),
    time_to_accuracy: float | None = typer.Option(
        None, help="Also race every method on every classifier of --models to this test "
        "accuracy (e.g. 0.95) at every bandwidth, and report the training wall time to "
        "reach it."),
    time_to_loss: float | None = typer.Option(
        None, help="Also race every method on every language model of --models that "
        "reports a held-out loss (lm-gpt, hf-gpt2) to this loss per byte (e.g. 2.2)."),
    tta_max_steps: int = typer.Option(400, help="Step budget of the accuracy race."),
    tta_eval_every: int = typer.Option(50, help="Steps between evaluations in the race."),
    tta_batch_size: int | None = typer.Option(
        None, help="Batch size per worker in the race (default: each model's own, the "
        "batch its default learning rate suits)."),
    tta_budget: float | None = typer.Option(
        600.0, help="Training seconds one race entrant may spend before it is stopped at "
        "its next evaluation (0 or less: no time budget, only --tta-max-steps)."),
    tta_prune_end: float | None = typer.Option(
        None, help="In the race, pruning methods reach --sparsity at this fraction of "
        "--tta-max-steps (cubic schedule from step 0; default: each method's own, as "
        "pactrain.attach gives it: the adaptive method chooses)."),
    tta_prune_initial: float | None = typer.Option(
        None, help="In the race, pruning methods start from this sparsity at step 0 (the "
        "cubic schedule's initial sparsity; default: as --tta-prune-end)."),
    compute_floor: bool = typer.Option(
        True, help="Also run no-comm (nothing sent) per model, to report each method's "
        "exposed communication per step."),
    json_out: str | None = typer.Option(None, "--json", help="Write the rows here."),
    plot: str | None = typer.Option(None, help="Write PNG plots here."),
    no_throttle: bool = typer.Option(False, help="Run on loopback even as root."),
    run_timeout: float = typer.Option(
        1800.0, help="Seconds before one run is killed (a race entrant: this plus "
                     "--tta-budget)."),
    seed: int = typer.Option(0, help="Seed of model init, data and compression."),
    optimizer: str = typer.Option(
        OPTIMIZERS[0], help=f"Every run's optimizer: {', '.join(OPTIMIZERS)} (SGD with "
        "momentum, or AdamW), each at the model's default rate for it."),
    bucket_cap_mb: float | None = typer.Option(
        None, help="Every run's DDP bucket size in MB (default: PyTorch's 25)."),
    gradient_as_bucket_view: bool = typer.Option(True, help=BUCKET_VIEW_HELP),
    broadcast_buffers: bool = typer.Option(False, help=BROADCAST_BUFFERS_HELP),
    data_dir: Path | None = typer.Option(
        None, help="Folder of a model's dataset files (Fashion-MNIST's four IDX files); "
                   "default $PACTRAIN_DATA, else /usr/share/datasets/fashion-mnist."),
    clean_stale: bool = typer.Option(False, help="Only remove namespaces left by crashed "
                                     "runs, then exit."),
) -> None:
    """Throughput, bytes and accuracy of every method side by side, on throttled links.

    Each worker runs in its own network namespace; each link is shaped with tc tbf in both
    directions (no delay emulation). Without root the bench says so and runs on loopback.
    """
    from rich.console import Console

    from pactrain.bench import netns
    from pactrain.bench.config import BenchConfig
    from pactrain.bench.report import (
        METRIC_MIN_STEPS,
        metric_hidden,
        rich_race_table,
        rich_table,
        write_json,
    )
    from pactrain.bench.runner import run_bench
    from pactrain.rates import parse_rate

    console = Console(width=None if sys.stdout.isatty() else 150)
    if clean_stale:
        removed = netns.clean_stale()
        console.print(f"removed {len(removed)} stale namespaces" +
                      (": " + ", ".join(removed) if removed else ""))
        return
    bandwidths: list[str | None] = [None if b.lower() == "none" else b
                                    for b in _split(bandwidth)]
    for b in bandwidths:
        if b is not None:
            parse_rate(b)
    # the baselines ignore these
    check_send_options("pactrain", send_density, send_select, rounding)
    load_model_modules(model_module)
    require_data(_split(models), data_dir)
    check_methods(_split(methods), optimizer, flag="--methods")
    try:
        config = BenchConfig(
            models=_split(models), methods=_split(methods), bandwidths=bandwidths,
            workers=workers, nodes=nodes, fsdp=fsdp, batch_size=batch_size, steps=steps,
            warmup_steps=warmup_steps,
            sparsity=sparsity, repeats=repeats, powersgd_rank=powersgd_rank,
            topk_density=topk_density, send_density=send_density, send_select=send_select,
            rounding=rounding,
            time_to_accuracy=time_to_accuracy,
            time_to_loss=time_to_loss,
            tta_max_steps=tta_max_steps, tta_eval_every=tta_eval_every,
            tta_batch_size=tta_batch_size,
            tta_budget_s=tta_budget if tta_budget and tta_budget > 0 else None,
            tta_prune_end=tta_prune_end, tta_prune_initial=tta_prune_initial,
            compute_floor=compute_floor,
            run_timeout_s=run_timeout, seed=seed, optimizer=optimizer,
            bucket_cap_mb=bucket_cap_mb, broadcast_buffers=broadcast_buffers,
            gradient_as_bucket_view=gradient_as_bucket_view,
        )
    except ValueError as err:
        raise typer.BadParameter(str(err)) from None
    def save_partial(rows: list[dict], curves: list[dict] | None = None) -> None:
        if json_out:  # a killed bench still leaves what it measured, races included
            write_json(json_out, rows, {"partial": True, "config": config.to_dict()},
                       curves)

    document = run_bench(config, want_throttle=not no_throttle, console=console,
                         on_row=save_partial, on_curve=save_partial)
    console.print(rich_table(document["rows"]))
    if metric_hidden(document["rows"]):
        console.print(f"metric: left out of runs under {METRIC_MIN_STEPS} steps (a few steps "
                      "say nothing about accuracy); for accuracy race the methods: pactrain "
                      "bench --models fashion-cnn --time-to-accuracy 0.88")
    if document["curves"]:
        console.print(rich_race_table(document["curves"]))
    if json_out:
        write_json(json_out, document["rows"], document["environment"], document["curves"])
        console.print(f"wrote {json_out}")
    if plot:
        from pactrain.plots import plot_bench

        plot_bench(document, plot)
        console.print(f"wrote {plot}")


def register(app: typer.Typer) -> None:
    """Add `bench` to the CLI."""
    app.command("bench")(bench)
