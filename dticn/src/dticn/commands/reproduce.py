"""`dticn reproduce`: the paper's comparison on the artifact topology, all configurations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from dticn.cli_options import CAP_RX, ENERGY_PROFILE

QUICK = {"seeds": 4, "duration": "2h"}
FULL = {"seeds": 10, "duration": "6h"}


def reproduce(
    quick: bool = typer.Option(False, "--quick",
                               help="Short version: 4 seeds x 2 h per configuration (15-60 s)."),
    seeds: int | None = typer.Option(None, "--seeds", help="Seeds per configuration."),
    duration: str | None = typer.Option(None, "--duration",
                                        help="Measurement window per run, e.g. 30m, 6h, 1d."),
    loss: list[float] | None = typer.Option(
        None, "--loss", help="Internet loss rates to run (repeat); default 0 (quick) or 0 and "
                             "0.05 (full). Rows of the first go to `rows`."),
    configs: str | None = typer.Option(None, "--configs",
                                       help="Comma-separated subset (default: all ten)."),
    battery_mah: float | None = typer.Option(
        None, "--battery-mah", help="Node battery (default 2600 mAh, two AA cells)."),
    workers: int | None = typer.Option(None, "--workers", help="Processes (default: CPUs)."),
    json_out: Path | None = typer.Option(None, "--json", help="Write rows and settings here."),
    plots: Path | None = typer.Option(None, "--plots",
                                      help="Directory for PNG plots (default: next to --json)."),
    profile: list[str] | None = typer.Option(
        None, "--profile", help="model (ours, default) or artifact (the artifact as it ran); "
        "repeat for both tables."),
    cap_rx: bool | None = CAP_RX,
    energy_profile: str | None = ENERGY_PROFILE,
    sensitivity: bool = typer.Option(
        False, "--sensitivity", help="Instead of the tables: from each --profile (default "
        "artifact), switch one difference at a time to the other profile's value; prints "
        "success, p50, LoRa frames per item and lifetime per variant, writes --json and a "
        "heat map (PNG next to the JSON, or sensitivity.png in --plots)."),
    mac: list[str] | None = typer.Option(
        None, "--mac", help="MAC under the LoRa faces: dsme (the paper's, default) or "
        "lorawan-a (LoRaWAN class A); repeat for the tables side by side and "
        "mac_comparison.png."),
    pcap: Path | None = typer.Option(
        None, "--pcap", help="Directory for pcap traces, two per run: "
        "<config>-s<seed>[-<profile>][-loss<p>]-lora.pcap (every LoRa frame, IEEE "
        "802.15.4) and -ndn.pcap (the gateway's NDN packets, NDN over UDP 6363), both "
        "timestamped with the simulated time from 0."),
) -> None:
    """Run every configuration over several seeds; print the table, write JSON and plots."""
    macs = _mac_names(mac)
    if sensitivity:
        if macs != ["dsme"]:
            raise typer.BadParameter("the sensitivity study varies the DSME edge; drop --mac",
                                     param_hint="--mac")
        if pcap is not None:
            raise typer.BadParameter("the sensitivity study's runs are not traced; drop "
                                     "--pcap (or run without --sensitivity)",
                                     param_hint="--pcap")
        if energy_profile is not None:
            raise typer.BadParameter("the sensitivity study switches the energy profile "
                                     "itself (its energy row); drop --energy-profile",
                                     param_hint="--energy-profile")
        run_sensitivity_study(quick=quick, seeds=seeds, duration=duration, loss=loss,
                              configs=configs, workers=workers, json_out=json_out,
                              plots=plots, profiles=profile, cap_rx=cap_rx,
                              battery_mah=battery_mah)
        return
    run_reproduce(quick=quick, seeds=seeds, duration=duration, loss=loss, configs=configs,
                  battery_mah=battery_mah, workers=workers, json_out=json_out, plots=plots,
                  profiles=profile, cap_rx=cap_rx, energy_profile=energy_profile,
                  pcap=pcap, macs=macs)


def _mac_names(macs: list[str] | None) -> list[str]:
    from dticn.mac.lorawan_config import MAC_NAMES

    names = list(dict.fromkeys(macs)) if macs else ["dsme"]
    bad = [m for m in names if m not in MAC_NAMES]
    if bad:
        raise typer.BadParameter(f"unknown MAC {bad}; known: {list(MAC_NAMES)}",
                                 param_hint="--mac")
    return names


def _config_names(configs: str | None) -> list[str]:
    from dticn.schemes import ALL_CONFIGS, registry

    names = [c.strip() for c in configs.split(",")] if configs else list(ALL_CONFIGS)
    unknown = [n for n in names if n not in registry()]
    if unknown:
        raise typer.BadParameter(f"unknown configurations {unknown}; known: {list(registry())}")
    return names


def _profile_names(profiles: list[str] | None, default: str) -> list[str]:
    from dticn.edge_profiles import PROFILES

    profs = list(profiles) if profiles else [default]
    bad = [p for p in profs if p not in PROFILES]
    if bad:
        raise typer.BadParameter(f"unknown profiles {bad}; known: {list(PROFILES)}")
    return profs


def run_sensitivity_study(*, quick: bool = False, seeds: int | None = None,
                          duration: str | None = None, loss: list[float] | None = None,
                          configs: str | None = None, workers: int | None = None,
                          json_out: Path | None = None, plots: Path | None = None,
                          profiles: list[str] | None = None, cap_rx: bool | None = None,
                          battery_mah: float | None = None) -> None:
    """``dticn reproduce --sensitivity``: one study per base profile (issue 13, item 1)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn
    from rich.table import Table

    from dticn.experiments.plots import write_sensitivity_plot
    from dticn.experiments.sensitivity import SHOWN, run_sensitivity, table
    from dticn.radio.scenario import parse_duration

    if cap_rx is not None:
        raise typer.BadParameter("the sensitivity study switches the CAP listen policy "
                                 "itself (its cap-rx row); drop --cap-rx/--no-cap-rx",
                                 param_hint="--cap-rx")
    if battery_mah is not None or (loss and len(loss) > 1):
        raise typer.BadParameter("the sensitivity study runs one loss rate on the default "
                                 "battery: give at most one --loss and no --battery-mah")
    preset = QUICK if quick else FULL
    n_seeds = seeds if seeds is not None else int(preset["seeds"])
    if n_seeds < 1:
        raise typer.BadParameter("--seeds must be >= 1")
    window = parse_duration(duration or str(preset["duration"]))
    names = _config_names(configs)
    bases = _profile_names(profiles, "artifact")
    console = Console(stderr=True)
    with Progress("[progress.description]{task.description}", BarColumn(),
                  MofNCompleteColumn(), TimeElapsedColumn(), console=console) as bar:
        task = bar.add_task("sensitivity runs", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        doc = run_sensitivity(configs=names, seeds=n_seeds, duration_s=window,
                              loss=loss[0] if loss else 0.0, bases=bases, workers=workers,
                              progress=progress)
    out = Console()
    for base in bases:
        for key, title, digits in SHOWN:
            head, body = table(doc, base, key, digits, label="variant")
            t = Table(title=f"{title}: from profile {base}, one difference switched at a time "
                            f"({n_seeds} seeds x {window:.0f} s, mean)")
            for k, h in enumerate(head):
                t.add_column(h, justify="left" if k == 0 else "right")
            for cells in body:
                t.add_row(*cells)
            out.print(t)
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(doc, indent=1, default=float), encoding="utf-8")
        console.print(f"wrote {json_out}")
    png = (plots / "sensitivity.png" if plots is not None
           else json_out.with_suffix(".png") if json_out is not None else None)
    if png is not None:
        console.print(f"wrote {write_sensitivity_plot(doc, png)}")


def run_reproduce(*, quick: bool = False, seeds: int | None = None, duration: str | None = None,
                  loss: list[float] | None = None, configs: str | None = None,
                  battery_mah: float | None = None, workers: int | None = None,
                  json_out: Path | None = None, plots: Path | None = None,
                  profiles: list[str] | None = None, cap_rx: bool | None = None,
                  energy_profile: str | None = None, pcap: Path | None = None,
                  macs: list[str] | None = None) -> None:
    """Plain-Python entry (what ``dticn demo`` calls): same arguments as the command."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn
    from rich.table import Table

    from dticn.edge_profiles import PROFILES
    from dticn.experiments.metrics import aggregate
    from dticn.experiments.params import Experiment
    from dticn.experiments.plots import write_mac_plot, write_plots
    from dticn.experiments.runner import run_many
    from dticn.experiments.table import COLUMNS, side_by_side, text_rows
    from dticn.radio.scenario import parse_duration

    preset = QUICK if quick else FULL
    n_seeds = seeds if seeds is not None else int(preset["seeds"])
    window = parse_duration(duration or str(preset["duration"]))
    losses = list(loss) if loss else ([0.0] if quick else [0.0, 0.05])
    names = _config_names(configs)
    if n_seeds < 1:
        raise typer.BadParameter("--seeds must be >= 1")
    profs = _profile_names(profiles, "model")
    from dticn.energy.profiles import ENERGY_PROFILES
    if energy_profile is not None and energy_profile not in ENERGY_PROFILES:
        raise typer.BadParameter(f"unknown energy profile {energy_profile!r}; known: "
                                 f"{list(ENERGY_PROFILES)}", param_hint="--energy-profile")
    macs = _mac_names(macs)
    if pcap is not None and macs != ["dsme"]:
        raise typer.BadParameter("pcap traces write LoRa frames as IEEE 802.15.4 (DSME); "
                                 "drop --pcap or run --mac dsme only", param_hint="--pcap")
    try:
        exps = [Experiment(config=c, seed=s, duration_s=window, loss=p,
                           battery_mah=battery_mah, profile=prof, cap_rx=cap_rx,
                           energy_profile=energy_profile, mac=m)
                for m in macs for prof in profs for p in losses for c in names
                for s in range(1, n_seeds + 1)]
    except ValueError as err:
        raise typer.BadParameter(str(err)) from None
    for directory in (json_out.parent if json_out is not None else None, plots, pcap):
        if directory is not None:  # an unusable output path fails now, not after the runs
            directory.mkdir(parents=True, exist_ok=True)
    console = Console(stderr=True)
    with Progress("[progress.description]{task.description}", BarColumn(),
                  MofNCompleteColumn(), TimeElapsedColumn(), console=console) as bar:
        task = bar.add_task(f"{len(exps)} runs", total=len(exps))
        rows = run_many(exps, workers=workers,
                        progress=lambda done, total: bar.update(task, completed=done),
                        pcap_dir=None if pcap is None else str(pcap))
    if pcap is not None:
        console.print(f"wrote {2 * len(exps)} pcap traces to {pcap}")
    by_mac: dict[str, dict[str, dict[float, list[dict[str, Any]]]]] = {
        m: {prof: {p: [aggregate([r for r in rows if r["config"] == c and r["loss"] == p
                                  and r["profile"] == prof and r["mac"] == m])
                       for c in names]
                   for p in losses}
            for prof in profs}
        for m in macs}
    by_profile = by_mac[macs[0]]
    tables = by_profile[profs[0]]
    out = Console()
    for m, prof, agg in [(mac_name, q, a) for mac_name in macs for q in profs
                         for a in by_mac[mac_name][q].values()]:
        p = agg[0]["loss"]
        table = Table(title=f"MAC {m}, profile {prof}, "
                            f"CAP RX {'on' if agg[0]['cap_rx'] else 'off'}, "
                            f"lifetimes from energy profile {agg[0]['energy_profile']}: "
                            f"{n_seeds} seeds x {window:.0f} s, Internet loss {p:.0%}, "
                            f"battery {agg[0]['battery_mah']:.0f} mAh (mean ± 95% CI)")
        for _, title, _ in COLUMNS:
            table.add_column(title, justify="right")
        for cells in text_rows(agg):
            table.add_row(*cells)
        out.print(table)
    if len(macs) > 1:
        for prof in profs:
            for p in losses:
                head, body = side_by_side({m: by_mac[m][prof][p] for m in macs})
                table = Table(title=f"side by side: profile {prof}, Internet loss {p:.0%} "
                                    f"({n_seeds} seeds x {window:.0f} s, means)")
                for k, h in enumerate(head):
                    table.add_column(h, justify="left" if k == 0 else "right")
                for cells in body:
                    table.add_row(*cells)
                out.print(table)
    if json_out is not None:
        first = losses[0]
        doc = {
            "settings": {"seeds": list(range(1, n_seeds + 1)), "duration_s": window,
                         "losses": losses, "configs": names, "profiles": profs,
                         "macs": macs,
                         "profile_settings": {p: PROFILES[p].as_dict() for p in profs},
                         "topology": "consumer -20ms- forwarder -20ms- gateway =LoRa= 1 node",
                         "traffic": "one transaction every U(50, 70) s"},
            "rows": tables[first],
            "rows_by_loss": {str(p): tables[p] for p in losses},
            "rows_by_profile": {prof: {str(p): t for p, t in by.items()}
                                for prof, by in by_profile.items()},
        }
        if len(macs) > 1:   # rows_by_profile holds the first MAC's rows
            doc["rows_by_mac"] = {m: {prof: {str(p): t for p, t in by.items()}
                                      for prof, by in per.items()}
                                  for m, per in by_mac.items()}
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(doc, indent=1, default=float), encoding="utf-8")
        console.print(f"wrote {json_out}")
    plot_dir = plots if plots is not None else (json_out.parent if json_out else None)
    if plot_dir is not None:
        for path in write_plots(tables[losses[0]], plot_dir):
            console.print(f"wrote {path}")
        if len(macs) > 1:
            path = write_mac_plot({m: by_mac[m][profs[0]][losses[0]] for m in macs},
                                  plot_dir / "mac_comparison.png")
            console.print(f"wrote {path}")


def register(app: typer.Typer) -> None:
    """Add `reproduce` to the CLI."""
    app.command("reproduce")(reproduce)
