"""`dticn get NAME` (consumer) and `dticn put NAME` (producer) over a forwarder."""

from __future__ import annotations

import sys

import typer


def get(
    name: str = typer.Argument(..., help="Name to fetch, e.g. /xid/1."),
    can_be_prefix: bool = typer.Option(False, "--can-be-prefix"),
    must_be_fresh: bool = typer.Option(False, "--must-be-fresh"),
    lifetime_ms: int = typer.Option(4000, "--lifetime", help="InterestLifetime in ms."),
    transport: str = typer.Option("", help="Forwarder URI; default $NDN_CLIENT_TRANSPORT."),
    wait_hints: bool = typer.Option(
        False, "--wait-hints",
        help="Follow DT-ICN wait hints (RICE): ask again, MustBeFresh, after each hint.",
    ),
    deadline_s: float = typer.Option(
        150.0, "--deadline", help="With --wait-hints: give up after this many seconds."),
) -> None:
    """Express one Interest; print the Data name and content, or the Nack/timeout."""
    from ndn.encoding import Name
    from ndn.types import InterestNack, InterestTimeout

    from dticn.net.ndnapp import make_app

    app = make_app(transport or None)
    status = {"code": 0}

    async def run() -> None:
        if wait_hints:
            from dticn.emulation.client import follow_hints_cli

            status["code"] = await follow_hints_cli(app, name, deadline_s, lifetime_ms)
            app.shutdown()
            return
        try:
            data_name, meta, content = await app.express_interest(
                name, must_be_fresh=must_be_fresh, can_be_prefix=can_be_prefix,
                lifetime=lifetime_ms,
            )
            typer.echo(f"DATA {Name.to_str(data_name)} type={meta.content_type}")
            sys.stdout.write(bytes(content or b"").decode(errors="replace") + "\n")
        except InterestNack as exc:
            typer.echo(f"NACK reason={exc.reason}")
            status["code"] = 2
        except InterestTimeout:
            typer.echo("TIMEOUT")
            status["code"] = 3
        finally:
            app.shutdown()

    app.run_forever(after_start=run())
    raise typer.Exit(status["code"])


def put(
    name: str = typer.Argument(..., help="Prefix to register and serve."),
    content: str = typer.Option("hello", help="Payload of every Data."),
    freshness_ms: int = typer.Option(10_000, "--freshness", help="FreshnessPeriod in ms."),
    transport: str = typer.Option("", help="Forwarder URI; default $NDN_CLIENT_TRANSPORT."),
) -> None:
    """Register NAME and answer every Interest under it with CONTENT (until killed)."""
    from ndn.encoding import Name

    from dticn.net.ndnapp import make_app

    app = make_app(transport or None)

    @app.route(name)
    def on_interest(int_name, _param, _app_param):  # type: ignore[no-untyped-def]
        app.put_data(int_name, content.encode(), freshness_period=freshness_ms)
        typer.echo(f"served {Name.to_str(int_name)}")
        sys.stdout.flush()

    async def announce() -> None:
        typer.echo(f"READY {name}")
        sys.stdout.flush()

    app.run_forever(after_start=announce())


def register(app: typer.Typer) -> None:
    """Add `get` and `put` to the CLI."""
    app.command("get")(get)
    app.command("put")(put)
