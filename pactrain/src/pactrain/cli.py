"""The `pactrain` command line.

Subcommands live one per module in `pactrain.commands`; each module defines
`register(app: typer.Typer) -> None`. Discovering them here keeps this file free of
edits as commands are added, and heavy imports (torch, numpy) stay inside each command
so that `pactrain --help` answers at once.
"""

from __future__ import annotations

import importlib
import pkgutil

import typer

from pactrain import __version__
from pactrain import commands as _commands


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"pactrain {__version__}")
        raise typer.Exit()


def build_app() -> typer.Typer:
    """Create the typer application with every subcommand found in `pactrain.commands`."""
    app = typer.Typer(
        name="pactrain",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )

    @app.callback()
    def _root(
        version: bool = typer.Option(
            False, "--version", callback=_version_callback, is_eager=True,
            help="Print the version and exit.",
        ),
    ) -> None:
        """PacTrain: pruning-aware compacted all-reduce for PyTorch DDP."""

    for info in sorted(pkgutil.iter_modules(_commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{_commands.__name__}.{info.name}")
        module.register(app)
    return app


def main() -> None:
    """Entry point of the console script."""
    build_app()()


if __name__ == "__main__":
    main()
