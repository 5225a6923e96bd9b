"""`dticn validate`: our radio model beside DSME-LoRa's published tables and figures."""

from __future__ import annotations

import json
from pathlib import Path

import typer


def validate_command(
    out: Path = typer.Option(Path("out/dticn-validate"), "--out",
                             help="Directory for the JSON, the Markdown page and the PNGs."),
    quick: bool = typer.Option(False, "--quick",
                               help="Fewer seeds and shorter runs (about a minute); no "
                                    "Fig. 22 sensitivity table."),
    from_json: Path | None = typer.Option(
        None, "--from-json", help="Rebuild the page and the figures from a JSON this "
        "command wrote, without running anything."),
    rerun_parts: list[str] = typer.Option(
        [], "--rerun", help="With --from-json: run this part again (fig22, fig22-layout, "
        "fig22-sensitivity, fig22-sensitivity-missing; repeatable), keep the JSON's other "
        "numbers, and write the JSON, page and figures anew."),
) -> None:
    """Regenerate DSME-LoRa's Table 5, 7, 8, Fig. 22 and 23 with our simulator and model."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from dticn.validation import RERUN_PARTS, rerun, step_count, validate

    if rerun_parts and from_json is None:
        raise typer.BadParameter("--rerun needs --from-json (the report to update)",
                                 param_hint="--rerun")
    unknown = [p for p in rerun_parts if p not in RERUN_PARTS]
    if unknown:
        raise typer.BadParameter(f"cannot rerun {', '.join(unknown)}; parts: "
                                 f"{', '.join(RERUN_PARTS)}", param_hint="--rerun")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise typer.BadParameter(f"cannot create {out}: {exc}", param_hint="--out") from exc
    console = Console(stderr=True)
    if from_json is not None:
        try:
            doc = json.loads(from_json.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise typer.BadParameter(f"{from_json}: {exc}", param_hint="--from-json") from exc
        if not isinstance(doc, dict) or not isinstance(doc.get("sections"), dict):
            raise typer.BadParameter(f"{from_json} is not a report of dticn validate (no "
                                     "'sections'); give the dticn-validation.json it wrote",
                                     param_hint="--from-json")
        if rerun_parts:
            doc = rerun(doc, rerun_parts, progress=lambda label: console.print(label))
        _write(doc, out, quick=bool(doc.get("quick")), rerun=bool(rerun_parts))
        return
    with Progress(TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as bar:
        task = bar.add_task("validating", total=step_count(quick))

        def step(label: str) -> None:
            bar.update(task, advance=1, description=label[:70])

        report = validate(quick=quick, progress=step)
    _write(report.as_dict(), out, quick=quick, rerun=True)


def _write(doc: dict, out: Path, *, quick: bool, rerun: bool) -> None:
    """JSON (when freshly run), the Markdown page and the figures; a summary table."""
    from rich.console import Console
    from rich.table import Table

    from dticn.validation import markdown
    from dticn.validation.figures import plot_validation

    command = "dticn validate" + (" --quick" if quick else "")
    if rerun:
        (out / "dticn-validation.json").write_text(json.dumps(doc, indent=1, default=float))
    (out / "dticn-validation.md").write_text(markdown(doc, command=command))
    pngs = plot_validation(doc, out)
    table = Table(title="DSME-LoRa (arXiv 2206.14077) vs ours")
    for col in ("section", "within tolerance"):
        table.add_column(col)
    for section in doc["sections"].values():
        table.add_row(section["title"], f"{section['passed']} / {section['judged']}")
    Console().print(table)
    Console(stderr=True).print(f"wrote {out / 'dticn-validation.md'}, {len(pngs)} figures"
                               + (f" and {out / 'dticn-validation.json'}" if rerun else ""))


def register(app: typer.Typer) -> None:
    """Add `validate` to the CLI."""
    app.command("validate")(validate_command)
