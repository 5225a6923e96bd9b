"""`dticn gateway`: an emulated DT-ICN gateway (real sockets, simulated LoRa edge)."""

from __future__ import annotations

import typer


def gateway(
    listen: list[str] = typer.Option(
        ["tcp://127.0.0.1:6363"], "--listen", "-l",
        help="Listener URI: tcp://HOST:PORT, udp://HOST:PORT or unix:///PATH (repeatable).",
    ),
    scheme: str | None = typer.Option(
        None, help="Retrieval scheme: v1-inr..v3-cr, rice (default), rice-schedule, push, "
        "push-draft."),
    nodes: int = typer.Option(3, help="Emulated LoRa nodes; node k owns /node<k>."),
    name_prefix: str = typer.Option(
        "node", help="Node k owns /<NAME_PREFIX><k> (use distinct ones for several gateways)."),
    scenario: str = typer.Option(
        "", help="TOML scenario file (scheme, seed, node prefixes, push times); --scheme "
        "and --seed win over it, --nodes and --name-prefix are ignored with it."),
    time_scale: float = typer.Option(
        1.0, help="Virtual seconds per wall second (10 = ten times faster)."),
    wire_time: str = typer.Option(
        "emulated", help="Times in packets (lifetimes, wait hints): 'emulated' seconds, or "
        "'wall' seconds for apps that do not know the time scale."),
    seed: int | None = typer.Option(
        None, help="Seed of the radio, nonces and push times (default 1)."),
    route: list[str] = typer.Option(
        [], "--route", "-r",
        help="Static route PREFIX=URI to another gateway or forwarder (tcp://, unix://, "
        "udp://; repeatable).",
    ),
    predict: list[str] = typer.Option(
        [], "--predict",
        help="Do not serve: print the simulator's time to content for NAME@T (a request at "
        "virtual time T; polling/RICE) or NAME (a pushed item), same scenario and seed "
        "(repeatable).",
    ),
    profile: str | None = typer.Option(
        None, "--profile", help="model (ours) or artifact (the artifact as it ran: its "
        "GTS placement, no duty cycle, WAIT+32, static FIB, 4-byte items); wins over "
        "--scenario's (default: the scenario's, else model)."),
    log_level: str = typer.Option("info", "--log-level", help="debug logs every packet."),
    status_every: float = typer.Option(10.0, help="Wall seconds between lag log lines."),
    pcap: str = typer.Option(
        "", "--pcap", help="Write every face's NDN frames (LoRa faces included) to this pcap "
        "file, NDN over UDP 6363 (wall-clock timestamps), and every simulated LoRa frame "
        "(beacons, data, ACKs) to a second file with -lora before the suffix (gw.pcap: "
        "gw-lora.pcap), IEEE 802.15.4, timestamped with the emulated time from 0."
    ),
) -> None:
    """Run a gateway whose Internet side is real sockets and whose LoRa side is emulated.

    Unmodified NDN apps connect to --listen. Prints `listening URI` lines, a `clock` line
    (epoch, scale), `registered PREFIX` lines and `READY` once every node registered.
    Status (virtual time, lag, counters) as JSON: Interest /localhost/dticn/status.
    """
    import asyncio
    import logging

    from dticn.emulation.edge_scenario import EdgeScenario
    from dticn.emulation.gateway_process import print_ready, serve_gateway
    from dticn.net.listen import ListenerError
    from dticn.net.serving import RouteUnreachable

    logging.basicConfig(
        level=getattr(logging, log_level.upper(), logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if time_scale <= 0:
        raise typer.BadParameter(f"--time-scale {time_scale}: give a positive factor "
                                 "(1 = real time, 10 = ten times faster)")
    if wire_time not in ("emulated", "wall"):
        raise typer.BadParameter(f"--wire-time {wire_time!r}: use emulated or wall")
    if nodes < 1:
        raise typer.BadParameter(f"--nodes {nodes}: give at least 1")
    if not name_prefix or "/" in name_prefix:
        raise typer.BadParameter(f"--name-prefix {name_prefix!r}: one word, no slashes "
                                 "(node k owns /<word><k>)")
    routes = []
    for r in route:
        prefix, sep, target = r.partition("=")
        if not sep or not prefix.startswith("/"):
            raise typer.BadParameter(f"--route {r!r}: expected PREFIX=URI, e.g. "
                                     "/node1=udp://127.0.0.1:6364")
        routes.append((prefix, target))
    try:
        if scenario:
            sc = EdgeScenario.from_file(scenario, scheme=scheme, seed=seed, profile=profile)
        else:
            prefixes = tuple(f"/{name_prefix}{k}" for k in range(1, nodes + 1))
            sc = EdgeScenario(scheme=scheme or "rice", nodes=nodes,
                              seed=1 if seed is None else seed, prefixes=prefixes,
                              profile=profile or "model")
    except (KeyError, ValueError, FileNotFoundError) as exc:
        raise typer.BadParameter(str(exc).strip('"')) from exc
    if predict:
        logging.getLogger().setLevel(logging.WARNING)
        _print_prediction(sc, predict)
        return
    try:
        asyncio.run(serve_gateway(sc, listen, time_scale=time_scale, wire_time=wire_time,
                                  routes=routes,
                                  ready=print_ready, status_every_s=status_every,
                                  pcap=pcap or None))
    except (ListenerError, RouteUnreachable) as exc:  # in use, taken, unreachable: why, fix
        typer.echo(f"dticn gateway: {exc}", err=True)
        raise typer.Exit(2) from None


def _print_prediction(scenario: object, specs: list[str]) -> None:
    """One ``PREDICT`` line per spec, from :func:`dticn.emulation.predict.predict`."""
    from dticn.emulation.edge_scenario import EdgeScenario
    from dticn.emulation.predict import predict
    from dticn.schemes import get as get_config

    assert isinstance(scenario, EdgeScenario)
    pushes = get_config(scenario.scheme).pushes
    requests = []
    for spec in specs:
        name, _, at = spec.partition("@")
        if not pushes:
            try:
                requests.append((float(at), name))
            except ValueError:
                raise typer.BadParameter(f"--predict {spec!r}: give NAME@T, T in virtual "
                                         "seconds after the gateway started") from None
    outcomes = predict(scenario, requests)
    for spec in specs:
        name = spec.partition("@")[0]
        item = outcomes.get(name)
        if item is None:
            typer.echo(f"PREDICT {name} outcome=not-produced (push schedule: --scenario)")
            continue
        ttc = item.time_to_content
        typer.echo(f"PREDICT {name} start={item.started:.3f} outcome={item.outcome} "
                   f"ttc={'-' if ttc is None else f'{ttc:.3f}'}")


def register(app: typer.Typer) -> None:
    """Add `gateway` to the CLI."""
    app.command("gateway")(gateway)
