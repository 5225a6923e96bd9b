"""`dticn status`: ask a running forwarder for its counters, tables, limits, faces and FIB.

Three datasets, fetched segment by segment as NFD's tools do: ``status/dticn`` (JSON:
counters, drops by reason, limits, per-face pending Interests and routes),
``faces/list`` (NFD's FaceStatus) and ``fib/list`` (NFD's FibEntry). Faces and FIB are
printed by default (``--no-faces``/``--no-fib`` leave them out); ``--json`` prints the
JSON dataset alone.
"""

from __future__ import annotations

from typing import Any

import typer


def status(
    transport: str = typer.Option("", help="Forwarder URI; default $NDN_CLIENT_TRANSPORT."),
    as_json: bool = typer.Option(False, "--json", help="Print the whole dataset as JSON."),
    faces: bool = typer.Option(True, "--faces/--no-faces", help="List the faces (NFD's "
                               "faces/list)."),
    fib: bool = typer.Option(True, "--fib/--no-fib", help="List the FIB (NFD's fib/list)."),
) -> None:
    """Print the forwarder's status, faces and FIB (drops by reason; NFD datasets)."""
    import json

    from ndn.app_support.segment_fetcher import segment_fetcher
    from ndn.types import InterestNack, InterestTimeout

    from dticn.net.ndnapp import make_app

    app = make_app(transport or None)
    wanted = ["status/dticn"] + ["faces/list"] * (faces and not as_json) \
        + ["fib/list"] * (fib and not as_json)
    got: dict[str, bytes] = {}
    failure: list[str] = []

    async def run() -> None:
        try:
            for dataset in wanted:
                got[dataset] = b"".join([bytes(seg) async for seg in segment_fetcher(
                    app, f"/localhost/nfd/{dataset}", timeout=2000, retry_times=1)])
        except (InterestNack, InterestTimeout) as exc:
            failure.append(f"no answer to /localhost/nfd/{dataset} ({type(exc).__name__}); "
                           "is it a dticn forwarder, and --transport right?")
        finally:
            app.shutdown()

    app.run_forever(after_start=run())
    if failure:
        typer.echo(f"dticn status: {failure[0]}", err=True)
        raise typer.Exit(2)
    st = json.loads(got["status/dticn"].decode())
    if as_json:
        typer.echo(json.dumps(st, indent=2, sort_keys=True))
        return
    lines = _summary(st)
    if "faces/list" in got:
        lines += _faces(got["faces/list"], {f["face_id"]: f for f in st["faces"]})
    if "fib/list" in got:
        lines += _fib(got["fib/list"])
    typer.echo("\n".join(lines))


def _summary(st: dict[str, Any]) -> list[str]:
    c, t = st["counters"], st["tables"]
    return [
        f"uptime {st['uptime_s']:.0f} s; faces {t['faces']}, FIB {t['fib']}, PIT {t['pit']}, "
        f"CS {t['cs']}",
        f"Interests in {c['in_interests']} out {c['out_interests']}; Data in {c['in_data']} "
        f"out {c['out_data']}; Nacks in {c['in_nacks']} out {c['out_nacks']}; "
        f"satisfied {c['satisfied_interests']} unsatisfied {c['unsatisfied_interests']}; "
        f"lifetimes capped {c['lifetimes_capped']}",
        "drops: " + (", ".join(f"{k} {v}" for k, v in sorted(c["drops"].items())) or "none"),
    ]


def _faces(wire: bytes, extra: dict[int, dict[str, Any]]) -> list[str]:
    """One line per face, as ``nfdc face list`` prints it, plus our PIT and route counts."""
    from ndn.app_support.nfd_mgmt import FaceStatusMsg

    lines = ["faces:"]
    for f in FaceStatusMsg.parse(wire).face_status or []:
        more = extra.get(f.face_id, {})
        lines.append(
            f"  face {f.face_id} {f.uri} local={f.local_uri} {f.face_scope.name.lower()} "
            f"{f.face_persistency.name.lower().replace('_', '-')} "
            f"in {f.n_in_interests}i/{f.n_in_data}d/{f.n_in_nacks}n "
            f"out {f.n_out_interests}i/{f.n_out_data}d/{f.n_out_nacks}n "
            f"bytes {f.n_in_bytes}/{f.n_out_bytes} "
            f"pending {more.get('pending_interests', '?')} routes {more.get('routes', '?')}"
        )
    return lines


def _fib(wire: bytes) -> list[str]:
    """One line per FIB prefix: ``PREFIX -> face (cost), ...`` as ``nfdc fib list``."""
    from ndn.app_support.nfd_mgmt import FibStatus
    from ndn.encoding import Name

    entries = FibStatus.parse(wire).entries or []
    lines = [f"FIB ({len(entries)} prefixes):"]
    for e in entries:
        hops = ", ".join(f"face {h.face_id} (cost {h.cost})" for h in e.next_hop_records or [])
        lines.append(f"  {Name.to_str(e.name)} -> {hops}")
    return lines


def register(app: typer.Typer) -> None:
    """Add `status` to the CLI."""
    app.command("status")(status)
