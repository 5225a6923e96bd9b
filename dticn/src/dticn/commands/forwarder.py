"""`dticn forwarder`: run the NDN forwarder on real sockets."""

from __future__ import annotations

import typer


def forwarder(
    listen: list[str] = typer.Option(
        ["tcp://127.0.0.1:6363"], "--listen", "-l",
        help="Listener URI: tcp://HOST:PORT, udp://HOST:PORT or unix:///PATH (repeatable).",
    ),
    log_level: str = typer.Option(
        "info", "--log-level", help="debug logs every packet in and out."
    ),
    cs_capacity: int = typer.Option(10_000, help="Content Store entries (LRU)."),
    cs_face_share: float = typer.Option(
        0.5, help="Fraction of the Content Store one face's Data may occupy (0: no quota)."
    ),
    pit_capacity: int = typer.Option(65_536, help="Most pending Interests."),
    pit_face_quota: int = typer.Option(
        16_384, help="Most pending Interests one face may wait on (0: no quota)."
    ),
    max_lifetime_ms: int = typer.Option(
        3_600_000, "--max-lifetime-ms", help="Longest InterestLifetime honoured (0: no cap)."
    ),
    routes_per_face: int = typer.Option(
        1_000, help="Most routes one face may register."
    ),
    strategy: str = typer.Option("best-route", help="Default strategy: best-route, multicast."),
    retx: str = typer.Option(
        "", help="CCN-lite per-entry policy LIFETIME_S/RETX_MS/COUNT, e.g. 4/1000/4 (INR)."
    ),
    time_scale: float = typer.Option(1.0, help="Clock speed-up factor (emulation)."),
    unix_mode: str = typer.Option(
        "0666", help="Permissions of unix socket files (octal): 0666 any local user (NFD's "
        "choice), 0660 the owner's group only."
    ),
    backlog: int = typer.Option(4096, help="Listen backlog of tcp and unix listeners."),
    warn_interval: float = typer.Option(
        10.0, help="Seconds between drop reports (WARNING when a limit dropped packets)."
    ),
    status_interval: float = typer.Option(
        60.0, help="Seconds between INFO status lines of counters (0: none)."
    ),
    pcap: str = typer.Option(
        "", "--pcap", help="Write every face's frames to this pcap file (NDN over UDP 6363 "
        "in Ethernet/IPv4 framing; Wireshark with NDN's ndn.lua dissects it)."
    ),
    route: list[str] = typer.Option(
        [], "--route", "-r",
        help="Static route PREFIX=URI: dial another forwarder (tcp://, unix://) and route "
        "PREFIX to it (repeatable).",
    ),
    trust_anchor: list[str] = typer.Option(
        [], "--trust-anchor",
        help="Key that may sign prefix registrations (repeatable): an NDN certificate "
        "(ndnsec cert-dump), a PEM public key or hmac:SECRET_FILE. None: any well-formed "
        "command from a local face is accepted (NFD's localhost default).",
    ),
) -> None:
    """Run an NDN forwarder that unmodified NDN apps (python-ndn, NFD tools) can use."""
    import asyncio
    import logging

    from dticn.forwarder.retx import RetxPolicy
    from dticn.forwarder.settings import ForwarderConfig
    from dticn.net.daemon import print_ready, serve
    from dticn.net.listen import ListenerError
    from dticn.net.serving import RouteUnreachable

    logging.basicConfig(
        level=getattr(logging, log_level.upper(), logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    config = ForwarderConfig(
        pit_capacity=pit_capacity, cs_capacity=cs_capacity, default_strategy=strategy,
        pit_face_quota=pit_face_quota or None, max_interest_lifetime_ms=max_lifetime_ms or None,
        routes_per_face=routes_per_face, cs_face_share=cs_face_share or None,
    )
    try:
        config.cs_face_quota()
    except ValueError as exc:
        raise typer.BadParameter(f"--cs-face-share {cs_face_share}: {exc}") from None
    if retx:
        try:
            life, ms, count = retx.split("/")
            config.default_retx = RetxPolicy.from_triple(float(life), float(ms), int(count))
        except ValueError as exc:
            raise typer.BadParameter(f"--retx {retx!r}: expected LIFETIME_S/RETX_MS/COUNT") from exc
    routes = []
    for r in route:
        prefix, sep, target = r.partition("=")
        if not sep or not prefix.startswith("/"):
            raise typer.BadParameter(f"--route {r!r}: expected PREFIX=URI, e.g. /xid=tcp://h:6363")
        routes.append((prefix, target))
    if warn_interval <= 0:
        raise typer.BadParameter(f"--warn-interval {warn_interval}: must be > 0 seconds")
    try:
        mode = int(unix_mode, 8)
    except ValueError as exc:
        raise typer.BadParameter(f"--unix-mode {unix_mode!r}: expected octal, e.g. 0660") from exc
    from dticn.mgmt.command_auth import authenticator_from_files

    authenticator = authenticator_from_files(trust_anchor)
    try:
        asyncio.run(serve(listen, config, time_scale=time_scale, ready=print_ready,
                          routes=routes, backlog=backlog, unix_mode=mode,
                          warn_interval=warn_interval, status_interval=status_interval,
                          pcap=pcap or None, authenticator=authenticator))
    except (ListenerError, RouteUnreachable) as exc:  # in use, taken, unreachable: why, fix
        typer.echo(f"dticn forwarder: {exc}", err=True)
        raise typer.Exit(2) from None


def register(app: typer.Typer) -> None:
    """Add `forwarder` to the CLI."""
    app.command("forwarder")(forwarder)
