"""`pactrain demo`: the package's main job on an embedded default (what `make demo` runs)."""

from __future__ import annotations

import typer


def demo() -> None:
    """Run PacTrain's main job on its embedded default, with no flags needed."""
    typer.echo("pactrain demo: the training job is being built (issue 3); nothing to run yet.")


def register(app: typer.Typer) -> None:
    """Add `demo` to the CLI."""
    app.command("demo")(demo)
