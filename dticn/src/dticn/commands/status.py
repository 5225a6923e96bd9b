"""`dticn status`: ask a running forwarder for its counters, tables, limits and faces."""

from __future__ import annotations

import typer


def status(
    transport: str = typer.Option("", help="Forwarder URI; default $NDN_CLIENT_TRANSPORT."),
    as_json: bool = typer.Option(False, "--json", help="Print the whole dataset as JSON."),
) -> None:
    """Print the forwarder's status (``/localhost/nfd/status/dticn``; drops by reason)."""
    import json

    from ndn.types import InterestNack, InterestTimeout

    from dticn.net.ndnapp import make_app

    app = make_app(transport or None)
    result: dict[str, object] = {"code": 0}

    async def run() -> None:
        try:
            _name, _meta, content = await app.express_interest(
                "/localhost/nfd/status/dticn", can_be_prefix=True, must_be_fresh=True,
                lifetime=2000,
            )
            result["status"] = json.loads(bytes(content or b"").decode())
        except (InterestNack, InterestTimeout) as exc:
            typer.echo(f"dticn status: no answer from the forwarder ({exc!r}); is it a "
                       "dticn forwarder, and the transport right?", err=True)
            result["code"] = 2
        finally:
            app.shutdown()

    app.run_forever(after_start=run())
    st = result.get("status")
    if isinstance(st, dict):
        typer.echo(json.dumps(st, indent=2, sort_keys=True) if as_json else _summary(st))
    raise typer.Exit(int(result["code"]))  # type: ignore[call-overload]


def _summary(st: dict) -> str:
    c, t = st["counters"], st["tables"]
    lines = [
        f"uptime {st['uptime_s']:.0f} s; faces {t['faces']}, FIB {t['fib']}, PIT {t['pit']}, "
        f"CS {t['cs']}",
        f"Interests in {c['in_interests']} out {c['out_interests']}; Data in {c['in_data']} "
        f"out {c['out_data']}; Nacks in {c['in_nacks']} out {c['out_nacks']}; "
        f"satisfied {c['satisfied_interests']} unsatisfied {c['unsatisfied_interests']}; "
        f"lifetimes capped {c['lifetimes_capped']}",
        "drops: " + (", ".join(f"{k} {v}" for k, v in sorted(c["drops"].items())) or "none"),
    ]
    for f in st["faces"]:
        fc = f["counters"]
        lines.append(f"  face {f['face_id']} {f['uri']} local={f['local']} in {fc['in_frames']} "
                     f"out {fc['out_frames']} pending {f['pending_interests']} "
                     f"routes {f['routes']}")
    return "\n".join(lines)


def register(app: typer.Typer) -> None:
    """Add `status` to the CLI."""
    app.command("status")(status)
