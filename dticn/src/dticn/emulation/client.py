"""Client side of delay-tolerant retrieval for python-ndn tools (``dticn get --wait-hints``).

A RICE-like gateway answers a request at once with a wait hint (ContentType WAIT, a
WaitTime TLV in milliseconds, :mod:`dticn.schemes.signalling`); the client asks again,
MustBeFresh, after the hint, until the content or a NACK comes. Times on the wire are the
gateway's: an emulated gateway runs ``time_scale`` times faster than the wall clock and says
so in its status (``/localhost/dticn/status``), so the client sleeps ``hint / time_scale``.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dticn.packets import ContentType, DecodeError
from dticn.packets.tlv import decode_uint, iter_elements
from dticn.schemes.signalling import CONTENT_TYPE_WAIT, TLV_WAIT_TIME

STATUS_NAME = "/localhost/dticn/status"


@dataclass(frozen=True)
class Fetched:
    """The content and how it came: virtual seconds to content, hints followed."""

    content: bytes
    content_type: int
    time_to_content_s: float
    hints: int


class NackedError(LookupError):
    """The gateway has no node for the name (Data ContentType NACK)."""


def wait_ms(content: bytes) -> int:
    """Milliseconds in a wait hint's WaitTime TLV; DecodeError when there is none."""
    buf = memoryview(content)
    for typ, _es, s, e in iter_elements(buf, 0, len(buf)):
        if typ == TLV_WAIT_TIME:
            return decode_uint(buf[s:e])
    raise DecodeError("wait hint without a WaitTime TLV (0xC8): is this a DT-ICN gateway?")


async def gateway_time_scale(app: Any) -> float:
    """Gateway seconds on the wire per wall second: the time scale of an emulated gateway
    whose packets carry emulated time, 1.0 for anything else (``--wire-time wall``, or a
    real gateway)."""
    from ndn.types import InterestNack, InterestTimeout

    try:
        _n, _m, content = await app.express_interest(
            STATUS_NAME, must_be_fresh=True, can_be_prefix=True, lifetime=1000)
        status = json.loads(bytes(content or b"{}"))
        return float(status.get("wire_time_scale", status["time_scale"]))
    except (InterestNack, InterestTimeout, ValueError, KeyError):
        return 1.0


async def fetch_following_hints(
    app: Any, name: str, *, time_scale: float = 1.0, deadline_s: float = 150.0,
    lifetime_ms: int = 4000, on_hint: Callable[[float], None] | None = None,
) -> Fetched:
    """Express ``name`` (MustBeFresh) and follow wait hints until content or NACK.

    Raises :class:`NackedError` on a NACK, TimeoutError when the next hint would pass
    ``deadline_s`` (gateway seconds); python-ndn's InterestNack/InterestTimeout pass through.
    """
    start = time.monotonic()
    hints = 0

    def elapsed() -> float:
        return (time.monotonic() - start) * time_scale

    while True:
        _name, meta, content = await app.express_interest(
            name, must_be_fresh=True, can_be_prefix=False, lifetime=lifetime_ms)
        body = bytes(content or b"")
        ctype = meta.content_type if meta.content_type is not None else ContentType.BLOB
        if ctype == ContentType.NACK:
            raise NackedError(f"{name}: the gateway knows no node for this name (NACK); "
                              "check the prefix or wait until the node registered")
        if ctype != CONTENT_TYPE_WAIT:
            return Fetched(body, ctype, elapsed(), hints)
        hint_s = wait_ms(body) / 1000.0
        hints += 1
        if on_hint is not None:
            on_hint(hint_s)
        if elapsed() + hint_s > deadline_s:
            raise TimeoutError(f"{name}: after {hints} hints the next one ({hint_s:.2f} s) "
                               f"passes the deadline of {deadline_s:g} s; raise --deadline")
        await asyncio.sleep(hint_s / time_scale)


async def follow_hints_cli(app: Any, name: str, deadline_s: float, lifetime_ms: int) -> int:
    """``dticn get --wait-hints``: print hints and the content; return the exit code
    (0 content, 2 NACK, 3 timeout or deadline)."""
    import typer
    from ndn.types import InterestNack, InterestTimeout

    scale = await gateway_time_scale(app)
    if scale != 1.0:
        typer.echo(f"gateway time scale {scale:g}: hints are in gateway seconds")

    def hint(seconds: float) -> None:
        typer.echo(f"WAIT {seconds:.3f} s")

    try:
        got = await fetch_following_hints(app, name, time_scale=scale, deadline_s=deadline_s,
                                          lifetime_ms=lifetime_ms, on_hint=hint)
    except NackedError as exc:
        typer.echo(f"NACK {exc}")
        return 2
    except InterestNack as exc:
        typer.echo(f"NACK reason={exc.reason}")
        return 2
    except (InterestTimeout, TimeoutError) as exc:
        typer.echo(f"TIMEOUT {exc}")
        return 3
    typer.echo(f"DATA {name} type={got.content_type} hints={got.hints} "
               f"time_to_content={got.time_to_content_s:.3f} s")
    typer.echo(got.content.decode(errors="replace"))
    return 0
