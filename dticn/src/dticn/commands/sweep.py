"""`dticn sweep`: beyond the paper. Grids over nodes, traffic, RTTs, SF and loss, in
parallel over local cores or on a Ray cluster (same results for the same seeds)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from dticn.cli_options import CAP_RX, ENERGY_PROFILE


def _split(text: str) -> list[str]:
    return [v.strip() for v in text.split(",") if v.strip()]


def _numbers(text: str, kind: type[int] | type[float], flag: str, example: str) -> list:
    """Comma-separated numbers of ``flag``; a bad one names the flag and an example."""
    try:
        return [kind(v) for v in _split(text)]
    except ValueError:
        raise typer.BadParameter(f"{text!r}: expected comma-separated {kind.__name__} values, "
                                 f"e.g. {example}", param_hint=flag) from None


def sweep(
    configs: str = typer.Option("rice-schedule,push-draft", "--configs",
                                help="Configurations (comma-separated)."),
    nodes: str = typer.Option("1,10,50,100", "--nodes", help="Nodes per gateway."),
    interval: str = typer.Option("50:70", "--interval",
                                 help="Gap between transactions per node: LOW:HIGH or MEAN s; "
                                      "comma-separated values, e.g. 50:70,600,3600."),
    pattern: str = typer.Option("uniform", "--pattern",
                                help="uniform (U(low,high)), periodic or poisson."),
    delay: str = typer.Option("20", "--delay",
                              help="Internet one-way delay ms, or CF:FG ms for differing RTTs."),
    sf: str = typer.Option("7", "--sf", help="Spreading factors."),
    loss: str = typer.Option("0", "--loss", help="Internet loss rates."),
    mac: str = typer.Option("dsme", "--mac",
                            help="MACs under the LoRa faces: dsme (the paper's) and/or "
                                 "lorawan-a (LoRaWAN class A), e.g. dsme,lorawan-a."),
    seeds: int = typer.Option(2, "--seeds", help="Seeds per grid point."),
    duration: str = typer.Option("1h", "--duration", help="Measurement window per run."),
    workers: int | None = typer.Option(None, "--workers", help="Local processes."),
    ray: str | None = typer.Option(
        None, "--ray", help="Run on Ray (needs the 'ray' extra): 'local' starts Ray on this "
        "machine, 'auto' joins a running one (ray start --head), or a cluster address "
        "(ray://HOST:10001); same rows as local processes."),
    json_out: Path | None = typer.Option(None, "--json", help="Write rows here."),
    profile: str = typer.Option("model", "--profile",
                                help="model (ours) or artifact (the artifact as it ran)."),
    cap_rx: bool | None = CAP_RX,
    energy_profile: str | None = ENERGY_PROFILE,
) -> None:
    """Run the grid (every combination of the given values) and print one row per point."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn
    from rich.table import Table

    from dticn.experiments.metrics import aggregate
    from dticn.experiments.runner import RayMissing, RayUnreachable, run_many
    from dticn.experiments.sweep import AXES, grid
    from dticn.experiments.table import fmt
    from dticn.experiments.world import schedule_overload
    from dticn.radio.scenario import parse_duration
    from dticn.schemes import registry

    names = _split(configs)
    unknown = [n for n in names if n not in registry()]
    if unknown:
        raise typer.BadParameter(f"unknown configurations {unknown}; known: {list(registry())}")
    numbers = {"nodes": _numbers(nodes, int, "--nodes", "1,10,50"),
               "sf": _numbers(sf, int, "--sf", "7,9,12"),
               "loss": _numbers(loss, float, "--loss", "0,0.05")}
    if json_out is not None:  # an unusable --json fails now, not after the runs
        json_out.parent.mkdir(parents=True, exist_ok=True)
    try:
        points = grid({
            "config": names, "nodes": numbers["nodes"], "interval": _split(interval),
            "pattern": _split(pattern), "delay": _split(delay), "sf": numbers["sf"],
            "loss": numbers["loss"], "mac": _split(mac),
        })
        window = parse_duration(duration)
        exps = [p.experiment(s, window).with_(profile=profile, cap_rx=cap_rx,
                                              energy_profile=energy_profile)
                for p in points for s in range(1, seeds + 1)]
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    console = Console(stderr=True)
    for k, point in enumerate(points):   # one line per point its schedule cannot carry
        overload = schedule_overload(exps[k * seeds])
        if overload is not None:
            label = ", ".join(f"{a} {v}" for a, v in point.label().items()
                              if a in ("config", "nodes", "interval", "sf", "mac"))
            console.print(f"[yellow]{label}: {overload.line('point')}[/yellow]",
                          soft_wrap=True)
    with Progress("[progress.description]{task.description}", BarColumn(),
                  MofNCompleteColumn(), TimeElapsedColumn(), console=console) as bar:
        task = bar.add_task(f"{len(points)} points x {seeds} seeds", total=len(exps))
        try:
            runs = run_many(exps, workers=workers, ray_address=ray,
                            progress=lambda done, total: bar.update(task, completed=done))
        except (RayMissing, RayUnreachable) as exc:
            raise typer.BadParameter(str(exc), param_hint="--ray") from None
    rows = []
    for k, point in enumerate(points):
        agg = aggregate(runs[k * seeds:(k + 1) * seeds])
        agg.update(point.label())
        agg.pop("latencies_s", None)
        rows.append(agg)
    table = Table(title=f"sweep, profile {profile}, CAP RX {'on' if rows[0]['cap_rx'] else 'off'}"
                        f", energy profile "
                        f"{'/'.join(dict.fromkeys(r['energy_profile'] for r in rows))}: "
                        f"{seeds} seeds x "
                        f"{window:.0f} s per point (mean ± 95% CI)")
    shown = [("success_ratio", "success", 3), ("latency_p95_s", "p95 s", 1),
             ("lora_frames_per_item", "LoRa frm/item", 2),
             ("internet_packets_per_item", "Inet pkt/item", 1),
             ("lifetime_days", "life d", 0)]
    varying = [a for a in AXES if len({row[a] for row in rows}) > 1] or ["config"]
    for axis in varying:
        table.add_column(axis)
    for _, title, _ in shown:
        table.add_column(title, justify="right")
    for row in rows:
        table.add_row(*(str(row[a]) for a in varying), *(fmt(row, k, d) for k, _, d in shown))
    Console().print(table)
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps({"profile": profile,
                                        "energy_profile": rows[0]["energy_profile"],
                                        "rows": rows}, indent=1,
                                       default=float),
                            encoding="utf-8")
        console.print(f"wrote {json_out}")


def register(app: typer.Typer) -> None:
    """Add `sweep` to the CLI."""
    app.command("sweep")(sweep)
