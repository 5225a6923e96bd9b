"""`dticn demo`: the package's main job on an embedded default (what `make demo` runs).

It is `dticn reproduce --quick`: every retrieval scheme of the paper on the artifact
topology, a few seeds of two simulated hours each, with the table printed and JSON and PNG
plots written to ``out/dticn-demo/``.
"""

from __future__ import annotations

from pathlib import Path

import typer

DEMO_DIR = Path("out/dticn-demo")


def demo(
    out_dir: Path = typer.Option(DEMO_DIR, "--out", help="Where JSON and plots go."),
) -> None:
    """Run DT-ICN's main job on its embedded default, with no flags needed."""
    from dticn.commands.reproduce import run_reproduce

    out_dir.mkdir(parents=True, exist_ok=True)  # an unusable --out fails now, not after the runs
    run_reproduce(quick=True, json_out=out_dir / "reproduce.json", plots=out_dir)


def register(app: typer.Typer) -> None:
    """Add `demo` to the CLI."""
    app.command("demo")(demo)
