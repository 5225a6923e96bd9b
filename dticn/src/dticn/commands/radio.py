"""`dticn radio`: simulate the LoRa/DSME edge and report delivery, latency, energy."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import typer


def _fmt(value: float, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{digits}f}"


def radio_command(
    scenario_file: Path | None = typer.Argument(None, help="TOML/JSON scenario (optional)."),
    nodes: int | None = typer.Option(None, "--nodes", help="Number of end nodes."),
    duration: str | None = typer.Option(None, "--duration", help="Horizon, e.g. 1d, 365d."),
    traffic: str | None = typer.Option(None, "--traffic", help="periodic:60s or poisson:60s."),
    sf: int | None = typer.Option(None, "--sf", help="Spreading factor 7..12."),
    payload: int | None = typer.Option(None, "--payload", help="Bytes per item (MAC payload)."),
    bw: float | None = typer.Option(None, "--bw", help="Bandwidth in kHz (125, 250, 500)."),
    inter_sf: str | None = typer.Option(None, "--inter-sf",
                                        help="Inter-SF interference: matrix or orthogonal."),
    capture_db: float | None = typer.Option(None, "--capture-db",
                                            help="Capture threshold (dB, default 6)."),
    seed: int | None = typer.Option(None, "--seed", help="Scenario seed."),
    so: int | None = typer.Option(None, "--so", help="Superframe order (artifact 3)."),
    mo: str | None = typer.Option(None, "--mo",
                                  help="Multisuperframe order, or 'auto': smallest >= 5 that "
                                       "holds every node's GTS (BO follows MO)."),
    bo: int | None = typer.Option(None, "--bo",
                                  help="Beacon order (default: follows MO; BO >= MO).  DSME-LoRa's "
                                       "Table 8 runs BO 7 with MO 3..7."),
    energy_profile: str | None = typer.Option(
        None, "--energy-profile", help="optimised (ours, default), dsme-lora (DSME-LoRa's "
        "measured per-event energy, Table 4, 90% regulator; DSME only) or casals-class-a "
        "(Casals et al.'s measured LoRaWAN class A device; --mac lorawan-a only)."),
    cap_plan: str | None = typer.Option(
        None, "--cap-plan", help="model (beacons/CAP on a 1% channel, off-time) or dsme-lora "
        "(10% sub-band channel, hourly budget, CAP queue of 8)."),
    cap_ack: bool | None = typer.Option(None, "--cap-ack/--no-cap-ack",
                                        help="CAP data frames confirmed (default) or not."),
    cad_miss: float | None = typer.Option(None, "--cad-miss",
                                          help="Probability that CAD misses a busy channel."),
    rx_chains: int | None = typer.Option(None, "--rx-chains",
                                         help="Gateway receive chains (1: SX1276, 8: SX1301)."),
    downlink: bool | None = typer.Option(None, "--downlink/--no-downlink",
                                         help="Give every node a downlink GTS too."),
    slot: str | None = typer.Option(None, "--slot", help="Node traffic in 'gts' or 'cap'."),
    association: str | None = typer.Option(None, "--association", help="static or handshake."),
    engine: str | None = typer.Option(None, "--engine", help="auto, batch or events."),
    upkeep: str | None = typer.Option(None, "--upkeep", help="closed (closed form) or events."),
    fading: float | None = typer.Option(None, "--fading", help="Per-frame fading sigma (dB)."),
    radius: float | None = typer.Option(None, "--radius", help="Node disc radius (m)."),
    battery: float | None = typer.Option(None, "--battery-mah", help="Battery capacity (mAh)."),
    mac: str | None = typer.Option(
        None, "--mac", help="dsme (IEEE 802.15.4e DSME, default), lorawan-a (LoRaWAN class "
        "A, EU868: ALOHA uplinks, RX1/RX2) or lorawan-b (class A plus beacons every 128 s "
        "and ping slots); LoRaWAN runs on the event engine."),
    confirmed: bool | None = typer.Option(
        None, "--confirmed/--unconfirmed", help="LoRaWAN: confirmed uplinks (ACK in RX1/RX2, "
        "up to 8 transmissions) or unconfirmed (default)."),
    json_out: Path | None = typer.Option(None, "--json", help="Write the full result here."),
    png_out: Path | None = typer.Option(None, "--png",
                                        help="Figure path (default: next to --json)."),
    rows: int = typer.Option(20, "--rows", help="Node rows shown in the table."),
    pcap: Path | None = typer.Option(
        None, "--pcap", help="Write every LoRa frame (beacons, data, ACKs, association "
        "commands) to this pcap file as IEEE 802.15.4 (LINKTYPE_IEEE802_15_4_NOFCS), "
        "timestamped with the simulated time from 0. Runs the event engine (--engine auto "
        "becomes events; batch is refused: it simulates no frames)."),
) -> None:
    """Simulate one gateway and its nodes; print a per-node table, write JSON and a PNG."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    from dticn.radio.context import build_context, smallest_mo_that_fits
    from dticn.radio.engines import run
    from dticn.radio.radio_plots import plot_run
    from dticn.radio.scenario import Scenario, parse_duration

    console = Console(stderr=True)
    for path in (json_out, png_out, pcap):
        if path is not None:  # an unusable output path fails now, not after the simulation
            path.parent.mkdir(parents=True, exist_ok=True)
    changes: dict[str, Any] = {
        "nodes": nodes, "traffic": traffic, "sf": sf, "payload_bytes": payload, "seed": seed,
        "so": so, "rx_chains": rx_chains, "downlink_gts": downlink, "slot": slot,
        "association": association, "engine": engine, "upkeep": upkeep,
        "fading_sigma_db": fading, "radius_m": radius, "battery_mah": battery,
        "bw_hz": None if bw is None else bw * 1e3, "inter_sf": inter_sf,
        "capture_db": capture_db, "energy_profile": energy_profile, "cap_plan": cap_plan,
        "cap_ack": cap_ack, "cad_miss_prob": cad_miss, "mac": mac, "confirmed": confirmed,
    }
    if duration is not None:
        changes["duration_s"] = parse_duration(duration)
    changes = {k: v for k, v in changes.items() if v is not None}
    try:
        base = Scenario.from_file(scenario_file) if scenario_file else Scenario()
        scenario = base.with_(**changes)
        lorawan = scenario.mac != "dsme"
        if lorawan and (mo is not None or bo is not None or so is not None):
            raise ValueError(f"--so/--mo/--bo are DSME's superframe orders; mac={scenario.mac} "
                             "has none")
        if not lorawan and mo is not None and mo != "auto":
            scenario = scenario.with_(mo=int(mo), bo=max(int(mo), scenario.bo))
        elif not lorawan and (mo == "auto" or scenario_file is None):
            best = smallest_mo_that_fits(scenario)
            if best != scenario.mo:
                console.print(f"[yellow]MO={scenario.mo} holds too few GTS for "
                              f"{scenario.nodes} nodes with {scenario.rx_chains} receive "
                              f"chain(s); using MO=BO={best} (multisuperframe "
                              f"{960 * 2**best / 1000:.2f} s). Use --rx-chains 8 to keep "
                              "the artifact's 30.72 s.[/yellow]")
                scenario = scenario.with_(mo=best, bo=max(best, scenario.bo))
        if bo is not None and not lorawan:
            if bo < scenario.mo:
                raise ValueError(f"--bo {bo} is below MO={scenario.mo}: DSME needs BO >= MO; "
                                 f"give --bo {scenario.mo} or more, or a smaller --mo")
            scenario = scenario.with_(bo=bo)
    except (ValueError, OSError) as exc:
        raise typer.BadParameter(str(exc)) from exc
    if pcap is not None:
        if lorawan:
            raise typer.BadParameter("--pcap writes IEEE 802.15.4 frames: it traces DSME runs "
                                     "only", param_hint="--pcap")
        if scenario.engine == "batch":
            raise typer.BadParameter("the batched engine simulates no frames to trace; drop "
                                     "--engine batch (or give --engine events)",
                                     param_hint="--pcap")
        scenario = scenario.with_(engine="events")

    from dticn.radio.capacity import duty_overload, gts_overload
    from dticn.radio.traffic import parse_traffic

    try:
        overload: Any
        if lorawan:               # no schedule: the duty cycle bounds what goes out
            overload = duty_overload(scenario, parse_traffic(scenario.traffic)[1])
        else:
            msf_s = build_context(scenario).mac.timing.multisuperframe_s
            overload = gts_overload(scenario, parse_traffic(scenario.traffic)[1], msf_s)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc
    if overload is not None:
        console.print(f"[yellow]{overload.line()}[/yellow]", soft_wrap=True)
    with Progress(TextColumn("simulating"), BarColumn(), TextColumn("{task.percentage:>3.0f}%"),
                  TimeElapsedColumn(), console=console, transient=True) as bar:
        task = bar.add_task("run", total=1.0)
        try:
            if pcap is None:
                result = run(scenario, progress=lambda f: bar.update(task, completed=f))
            else:
                result, traced = _run_traced(scenario, pcap,
                                             lambda f: bar.update(task, completed=f))
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from exc
    if pcap is not None:
        console.print(f"wrote {pcap} ({traced} LoRa frames, IEEE 802.15.4)")

    summary = result.summary()
    table = Table(title=f"{scenario.nodes} nodes, {scenario.duration_s / 86400:g} d, "
                        f"{scenario.traffic}, SF{scenario.sf}, MAC {scenario.mac}"
                        f"{' confirmed' if scenario.confirmed else ''}, engine {result.engine}, "
                        f"energy profile {scenario.energy_profile}")
    for col in ("node", "PDR", "lat p50 s", "lat p90 s", "lat p99 s", "collisions", "retries",
                "airtime s", "duty %", "J/day", "mW", "lifetime d"):
        table.add_column(col, justify="right")
    for n in result.nodes[:rows]:
        lat = n.as_dict()["latency_s"]
        e = n.energy
        table.add_row(str(n.node), _fmt(n.delivery_ratio, 4), _fmt(lat["p50"]),
                      _fmt(lat["p90"]), _fmt(lat["p99"]), str(n.collisions), str(n.retries),
                      _fmt(n.airtime_s, 1), _fmt(100 * n.duty_cycle, 4),
                      _fmt(e.energy_per_day_j if e else float("nan")),
                      _fmt(e.power_mw if e else float("nan"), 4),
                      _fmt(e.lifetime_days if e else float("nan"), 0))
    lat = summary["latency_s"]
    table.add_row("all", _fmt(summary["delivery_ratio"], 4), _fmt(lat["p50"]), _fmt(lat["p90"]),
                  _fmt(lat["p99"]), str(summary["collisions"]), str(summary["retries"]),
                  _fmt(summary["airtime_s"], 1), _fmt(100 * summary["max_duty_cycle"], 4),
                  _fmt(summary["energy_per_day_J_mean"]), _fmt(summary["power_mw_mean"], 4),
                  _fmt(summary["lifetime_days_min"], 0), style="bold")
    out = Console(width=None if Console().is_terminal else 160)
    out.print(table)
    if len(result.nodes) > rows:
        out.print(f"({len(result.nodes) - rows} more nodes in the JSON; last row: totals, "
                  "max duty cycle, mean energy, shortest lifetime)")
    out.print(f"{summary['generated']} items, {summary['delivered']} delivered; "
              f"gateway duty cycle {result.gateway.get('duty_cycle_by_subband')}; "
              f"wall {result.wall_s:.2f} s, {summary['sim_s_per_wall_s']:.3g} sim-s/wall-s")
    if json_out is not None:
        json_out.write_text(json.dumps(result.as_dict(), indent=1, default=str))
        out.print(f"wrote {json_out}")
        if png_out is None:
            png_out = json_out.with_suffix(".png")
    if png_out is not None:
        plot_run(result, None if lorawan else build_context(scenario).table, png_out)
        out.print(f"wrote {png_out}")


def _run_traced(scenario: Any, path: Path, progress: Any) -> tuple[Any, int]:
    """Run the event engine with every frame on its medium traced to ``path``; returns the
    result and the frames written."""
    from dticn.net.lora_pcap import trace_radio
    from dticn.radio.network import RadioNetwork

    network = RadioNetwork(scenario)
    trace = trace_radio(network, str(path))
    try:
        result = network.run(progress)
    finally:
        trace.close()
    return result, trace.frames


def register(app: typer.Typer) -> None:
    """Add `radio` to the CLI."""
    app.command("radio")(radio_command)
