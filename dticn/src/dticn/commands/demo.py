"""`dticn demo`: the package's main job on an embedded default (what `make demo` runs)."""

from __future__ import annotations

import typer


def demo() -> None:
    """Run DT-ICN's main job on its embedded default, with no flags needed."""
    typer.echo("dticn demo: the experiments are being built (issues 5-7); nothing to run yet.")


def register(app: typer.Typer) -> None:
    """Add `demo` to the CLI."""
    app.command("demo")(demo)
