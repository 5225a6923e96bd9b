"""Put a forwarder on sockets and take it off again: the one start-up and shut-down of
``dticn forwarder`` (:func:`dticn.net.daemon.serve`) and ``dticn gateway``
(:func:`dticn.emulation.gateway_process.serve_gateway`).

Start-up, in order: parse every ``--listen`` URI (a typo fails before anything opens),
install SIGTERM/SIGINT as the stop signal, open the pcap trace, open each listener, dial
each static route. A listener that cannot be opened raises
:class:`~dticn.net.listen.ListenerError` and a route whose peer does not answer raises
:class:`RouteUnreachable`, each with one line saying why and what to do, after closing
whatever was already open. Shut-down, however the body ends: close the listeners, close
every face (the forwarder forgets their routes and PIT records), close the trace.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field

from dticn.forwarder.forwarder import Forwarder
from dticn.net.listen import (
    DEFAULT_BACKLOG,
    DEFAULT_UNIX_MODE,
    ListenerError,
    ListenUri,
    open_connection,
    open_listener,
)
from dticn.net.pcap import PcapWriter, trace_forwarder
from dticn.packets.name import Name, name_from_str

log = logging.getLogger(__name__)


class RouteUnreachable(ConnectionError):
    """A static route's peer did not answer; the message names the route and the fix."""


@dataclass
class Serving:
    """What :func:`serving` opened: the bound URIs (real ports), the static routes' prefixes,
    the event that stops the process and the pcap trace (None without ``pcap``)."""

    bound: list[str]
    stop: asyncio.Event
    trace: PcapWriter | None = None
    routes: list[Name] = field(default_factory=list)


@contextlib.asynccontextmanager
async def serving(
    fw: Forwarder,
    listen: Sequence[str],
    *,
    routes: Sequence[tuple[str, str]] = (),
    stop: asyncio.Event | None = None,
    backlog: int = DEFAULT_BACKLOG,
    unix_mode: int = DEFAULT_UNIX_MODE,
    pcap: str | None = None,
) -> AsyncIterator[Serving]:
    """Open ``fw``'s listeners and static ``(prefix, uri)`` routes for the ``async with``
    body; close them and every face when it ends (see the module docstring)."""
    if not listen:
        raise ValueError("give at least one --listen URI, e.g. tcp://127.0.0.1:6363")
    uris = [ListenUri.parse(u) for u in listen]
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    state = Serving([], stop, trace_forwarder(fw, pcap) if pcap else None)
    closers: list[Callable[[], None]] = []
    try:
        for uri in uris:
            where, close = await _listen(fw, uri, backlog, unix_mode)
            state.bound.append(where)
            closers.append(close)
            log.info("listening on %s", where)
        for prefix, target in routes:
            try:
                face = await open_connection(fw, ListenUri.parse(target))
            except OSError as exc:
                raise RouteUnreachable(
                    f"--route {prefix}={target}: cannot reach the peer ({exc}); start that "
                    "gateway or forwarder first") from exc
            fw.add_route(name_from_str(prefix), face.face_id)
            state.routes.append(name_from_str(prefix))
            log.info("route %s -> face %d %s", prefix, face.face_id, target)
        yield state
    finally:
        for close in closers:
            close()
        for face in list(fw.faces.values()):
            face.close()
        if state.trace is not None:
            state.trace.close()
            log.info("pcap %s: %d frames", pcap, state.trace.frames)


async def _listen(fw: Forwarder, uri: ListenUri, backlog: int, unix_mode: int
                  ) -> tuple[str, Callable[[], None]]:
    """:func:`~dticn.net.listen.open_listener`, every refusal a :class:`ListenerError`."""
    try:
        return await open_listener(fw, uri, backlog=backlog, unix_mode=unix_mode)
    except ListenerError:
        raise
    except OSError as exc:
        raise ListenerError(f"cannot listen on {uri}: {exc.strerror or exc}; another "
                            "process may hold it: stop it or listen elsewhere") from exc


def print_listening(bound: Sequence[str], *extra: str) -> None:
    """Tell a parent process where we listen: one ``listening URI`` line per listener,
    the ``extra`` lines, then ``READY``."""
    lines = [f"listening {uri}" for uri in bound] + list(extra) + ["READY"]
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()
