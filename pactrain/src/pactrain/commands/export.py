"""`pactrain export`: the pruned model of a checkpoint, sparse on disk, for inference."""

from __future__ import annotations

from pathlib import Path

import typer


def export(
    checkpoint: Path = typer.Argument(..., exists=True, dir_okay=False,
                                      help="A `pactrain train --checkpoint` file (or a "
                                           "dict with 'model' and pactrain.attach's state)."),
    out: Path = typer.Argument(..., help="The sparse file to write."),
) -> None:
    """Write the pruned weights as kept values plus a bitmask (load with
    pactrain.export.load_sparse) and print dense against sparse size."""
    from pactrain.export import export_checkpoint

    try:
        report = export_checkpoint(checkpoint, out)
    except ValueError as err:
        raise typer.BadParameter(str(err), param_hint="CHECKPOINT") from None
    typer.echo(f"{out}: {report.file_bytes / 1e6:.3f} MB on disk against "
               f"{report.dense_bytes / 1e6:.3f} MB of dense weights "
               f"({report.file_bytes / report.dense_bytes:.2f}x); {report.sparse_tensors} "
               f"masked tensors at density {report.density:.3f}")


def register(app: typer.Typer) -> None:
    """Add `export` to the CLI."""
    app.command("export")(export)
