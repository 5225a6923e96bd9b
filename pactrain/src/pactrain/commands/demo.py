"""`pactrain demo`: the package's main job on an embedded default (what `make demo` runs).

A short version of `pactrain bench`: resnet18 (11.7 M parameters) with 2 workers at
100 Mbit/s per worker link (network namespaces and `tc tbf` when run as root; loopback,
said plainly, otherwise), dense all-reduce against fp16, PowerSGD and PacTrain, side by
side in one run. Table on the terminal; JSON and a PNG under ``out/pactrain-demo/``.
The accuracy column is the real digits test accuracy after only 8 steps (throughput is the
point here); ``pactrain bench --time-to-accuracy 0.95`` races the methods to a target.
"""

from __future__ import annotations

from pathlib import Path

import typer

DEMO_DIR = Path("out/pactrain-demo")
DEMO_ARGS = [
    "bench", "--models", "resnet18", "--methods", "dense,fp16,powersgd,pactrain",
    "--workers", "2", "--bandwidth", "100mbit", "--batch-size", "8", "--steps", "8",
    "--warmup-steps", "2", "--sparsity", "0.8",
]


def demo(
    out_dir: Path = typer.Option(DEMO_DIR, "--out", help="Where JSON and the plot go."),
) -> None:
    """Run PacTrain's main job on its embedded default, with no flags needed."""
    from pactrain.cli import build_app

    out_dir.mkdir(parents=True, exist_ok=True)
    args = [*DEMO_ARGS, "--json", str(out_dir / "bench.json"),
            "--plot", str(out_dir / "bench.png")]
    typer.echo("pactrain demo = pactrain " + " ".join(args))
    build_app()(args, standalone_mode=False)


def register(app: typer.Typer) -> None:
    """Add `demo` to the CLI."""
    app.command("demo")(demo)
