"""`dticn airtime`: LoRa time on air by the Semtech formula, like airtime calculators."""

from __future__ import annotations

import json

import typer


def airtime_command(
    sf: int = typer.Option(7, "--sf", help="Spreading factor 7..12."),
    bw: float = typer.Option(125.0, "--bw", help="Bandwidth in kHz (125, 250, 500, ...)."),
    cr: str = typer.Option("4/5", "--cr", help="Coding rate 4/5..4/8."),
    payload: int = typer.Option(20, "--payload", help="PHY payload in bytes (0..255)."),
    preamble: int = typer.Option(8, "--preamble", help="Programmed preamble symbols."),
    implicit_header: bool = typer.Option(False, "--implicit-header",
                                         help="Implicit header mode (no PHY header)."),
    crc: bool = typer.Option(True, "--crc/--no-crc", help="Payload CRC on or off."),
    ldro: str = typer.Option("auto", "--ldro",
                             help="Low data rate optimisation: auto (T_sym > 16 ms), on, off."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON object."),
) -> None:
    """Print the time on air (ms) and symbol count of one LoRa frame (Semtech AN1200.13)."""
    from dticn.phy.airtime import LoRaParams, airtime, parse_coding_rate

    if ldro not in ("auto", "on", "off"):
        raise typer.BadParameter("use auto, on or off", param_hint="--ldro")
    try:
        params = LoRaParams(sf=sf, bw_hz=bw * 1e3, cr=parse_coding_rate(cr), preamble=preamble,
                            explicit_header=not implicit_header, crc=crc,
                            low_data_rate=None if ldro == "auto" else ldro == "on")
        result = airtime(params, payload)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc
    if as_json:
        typer.echo(json.dumps({
            "time_on_air_ms": result.seconds * 1e3, "symbols": result.symbols,
            "preamble_symbols": result.preamble_symbols,
            "payload_symbols": result.payload_symbols, "symbol_ms": params.symbol_s * 1e3,
            "preamble_ms": result.preamble_s * 1e3, "payload_ms": result.payload_s * 1e3,
            "low_data_rate_optimisation": bool(params.de),
            "sf": sf, "bw_khz": bw, "cr": f"4/{params.cr + 4}", "payload_bytes": payload,
            "preamble": preamble, "explicit_header": not implicit_header, "crc": crc,
        }))
        return
    typer.echo(f"Time on air: {result.seconds * 1e3:.3f} ms")
    typer.echo(f"Symbols: {result.symbols:g} ({result.preamble_symbols:g} preamble + "
               f"{result.payload_symbols} payload), symbol time {params.symbol_s * 1e3:.3f} ms, "
               f"low data rate optimisation {'on' if params.de else 'off'}")


def register(app: typer.Typer) -> None:
    """Add `airtime` to the CLI."""
    app.command("airtime")(airtime_command)
