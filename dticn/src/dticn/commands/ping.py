"""`dticn ping PREFIX` and `dticn ping-server PREFIX` (ndnping's name scheme:
Interests for ``PREFIX/ping/<sequence>``)."""

from __future__ import annotations

import typer


def ping(
    prefix: str = typer.Argument(..., help="Prefix a ping server serves."),
    count: int = typer.Option(4, "-c", "--count"),
    interval_ms: int = typer.Option(500, "-i", "--interval"),
    lifetime_ms: int = typer.Option(4000, "--lifetime"),
    transport: str = typer.Option("", help="Forwarder URI; default $NDN_CLIENT_TRANSPORT."),
) -> None:
    """Send COUNT pings, print each RTT, exit 0 if any reply came back."""
    import asyncio
    import random
    import time

    from ndn.types import InterestNack, InterestTimeout

    from dticn.net.ndnapp import make_app

    app = make_app(transport or None)
    stats = {"ok": 0}
    seq0 = random.Random().getrandbits(32)

    async def run() -> None:
        try:
            for k in range(count):
                name = f"{prefix}/ping/{seq0 + k}"
                t0 = time.perf_counter()
                try:
                    await app.express_interest(name, must_be_fresh=True, lifetime=lifetime_ms)
                    rtt = (time.perf_counter() - t0) * 1000
                    typer.echo(f"reply from {prefix}: seq={seq0 + k} time={rtt:.3f} ms")
                    stats["ok"] += 1
                except InterestNack as exc:
                    typer.echo(f"nack from {prefix}: seq={seq0 + k} reason={exc.reason}")
                except InterestTimeout:
                    typer.echo(f"timeout from {prefix}: seq={seq0 + k}")
                if k + 1 < count:
                    await asyncio.sleep(interval_ms / 1000)
        finally:
            typer.echo(f"{count} sent, {stats['ok']} received")
            app.shutdown()

    app.run_forever(after_start=run())
    raise typer.Exit(0 if stats["ok"] else 1)


def ping_server(
    prefix: str = typer.Argument(..., help="Prefix to serve pings under."),
    transport: str = typer.Option("", help="Forwarder URI; default $NDN_CLIENT_TRANSPORT."),
) -> None:
    """Answer ``PREFIX/ping/...`` Interests (until killed)."""
    from dticn.net.ndnapp import make_app

    app = make_app(transport or None)

    @app.route(f"{prefix}/ping")
    def on_interest(int_name, _param, _app_param):  # type: ignore[no-untyped-def]
        app.put_data(int_name, b"", freshness_period=0)

    async def announce() -> None:
        typer.echo(f"READY {prefix}")

    app.run_forever(after_start=announce())


def register(app: typer.Typer) -> None:
    """Add `ping` and `ping-server` to the CLI."""
    app.command("ping")(ping)
    app.command("ping-server")(ping_server)
