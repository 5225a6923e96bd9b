"""`pactrain demo`: the package's main job on an embedded default (what `make demo` runs).

A short version of `pactrain bench`: ResNet-18 (11.2 M parameters; on Fashion-MNIST where
``dataset-fashion-mnist`` is installed, else on the bundled digits) with 2 workers at
100 Mbit/s per worker link (network namespaces and `tc tbf` when run as root; loopback,
said plainly, otherwise), dense all-reduce against fp16, PowerSGD and PacTrain, side by
side in one run. Table on the terminal; JSON and a PNG under ``out/pactrain-demo/``.
Eight steps say nothing about accuracy, so the table leaves it out and points to the race
(``pactrain bench --models fashion-cnn --time-to-accuracy 0.88``). The demo says in one
line whether Fashion-MNIST is installed, where the race needs it.
"""

from __future__ import annotations

from pathlib import Path

import typer

DEMO_DIR = Path("out/pactrain-demo")
DEMO_ARGS = [
    "bench", "--methods", "dense,fp16,powersgd,pactrain",
    "--workers", "2", "--bandwidth", "100mbit", "--batch-size", "8", "--steps", "8",
    "--warmup-steps", "2", "--sparsity", "0.8",
]


def demo_model() -> tuple[str, str]:
    """The demo's model and one line saying why: ResNet-18 on Fashion-MNIST where the
    dataset is installed, else on scikit-learn's bundled digits (always there)."""
    from pactrain.data import fashion_mnist

    try:
        where = fashion_mnist.check_available()
    except FileNotFoundError:
        return "resnet18", (
            f"Fashion-MNIST: not installed (`{fashion_mnist.INSTALL_HINT}`), so the demo "
            "runs resnet18 on scikit-learn's digits; the accuracy race `pactrain bench "
            "--models fashion-cnn --time-to-accuracy 0.88` needs it")
    return "fashion-resnet18", (
        f"Fashion-MNIST: found in {where}; race to accuracy with `pactrain bench "
        "--models fashion-cnn --time-to-accuracy 0.88`")


def demo(
    out_dir: Path = typer.Option(DEMO_DIR, "--out", help="Where JSON and the plot go."),
) -> None:
    """Run PacTrain's main job on its embedded default, with no flags needed."""
    from pactrain.cli import build_app

    out_dir.mkdir(parents=True, exist_ok=True)
    model, line = demo_model()
    args = [*DEMO_ARGS, "--models", model, "--json", str(out_dir / "bench.json"),
            "--plot", str(out_dir / "bench.png")]
    typer.echo("pactrain demo = pactrain " + " ".join(args))
    typer.echo(line)
    build_app()(args, standalone_mode=False)


def register(app: typer.Typer) -> None:
    """Add `demo` to the CLI."""
    app.command("demo")(demo)
