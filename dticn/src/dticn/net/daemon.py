"""Run the forwarder over real sockets: the process behind ``dticn forwarder``."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
import sys
from collections.abc import Callable, Sequence

from dticn.forwarder.forwarder import Forwarder, ForwarderConfig
from dticn.mgmt.command_auth import CommandAuthenticator
from dticn.mgmt.nfd import NfdManagement
from dticn.net.clock import AsyncioClock
from dticn.net.listen import (
    DEFAULT_BACKLOG,
    DEFAULT_UNIX_MODE,
    ListenUri,
    open_connection,
    open_listener,
)
from dticn.net.pcap import trace_forwarder
from dticn.net.report import start_reporting
from dticn.packets import name_from_str

log = logging.getLogger(__name__)


async def serve(
    listen: Sequence[str],
    config: ForwarderConfig | None = None,
    *,
    time_scale: float = 1.0,
    ready: Callable[[list[str]], None] | None = None,
    stop: asyncio.Event | None = None,
    routes: Sequence[tuple[str, str]] = (),
    backlog: int = DEFAULT_BACKLOG,
    unix_mode: int = DEFAULT_UNIX_MODE,
    warn_interval: float = 10.0,
    status_interval: float = 60.0,
    pcap: str | None = None,
    authenticator: CommandAuthenticator | None = None,
) -> Forwarder:
    """Start a forwarder on ``listen`` URIs and run until ``stop`` is set (or SIGTERM).

    ``routes`` are static ``(prefix, uri)`` pairs: the forwarder dials ``uri`` (another
    forwarder) and routes ``prefix`` there, which is how multi-hop topologies (consumer,
    forwarder, gateway) are built from processes. ``ready`` receives the bound URIs
    (real ports) once every listener is open and every route is connected.
    ``backlog`` and ``unix_mode`` go to :func:`dticn.net.listen.open_listener`, which
    raises :class:`dticn.net.listen.ListenerError` when a listener cannot be opened.
    Drops are logged at most once per ``warn_interval`` and counters every
    ``status_interval`` (:mod:`dticn.net.report`); ``dticn status`` asks at any time.
    ``pcap`` names a file that receives every frame of every face
    (:class:`dticn.net.pcap.PcapWriter`; flushed with each status report).
    ``authenticator`` checks signed prefix-registration commands against trust anchors
    (:mod:`dticn.mgmt.command_auth`); None: NFD's localhost default.
    """
    if not listen:
        raise ValueError("give at least one --listen URI, e.g. tcp://127.0.0.1:6363")
    uris = [ListenUri.parse(u) for u in listen]
    clock = AsyncioClock(time_scale=time_scale)
    fw = Forwarder(clock, config)
    writer = trace_forwarder(fw, pcap) if pcap else None
    NfdManagement(fw, authenticator=authenticator)
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    closers: list[Callable[[], None]] = []
    bound = []
    for uri in uris:
        try:
            where, close = await open_listener(fw, uri, backlog=backlog, unix_mode=unix_mode)
        except OSError:
            for opened in closers:
                opened()
            raise
        bound.append(where)
        closers.append(close)
        log.info("listening on %s", where)
    for prefix, target in routes:
        face = await open_connection(fw, ListenUri.parse(target))
        fw.add_route(name_from_str(prefix), face.face_id)
        log.info("route %s -> face %d %s", prefix, face.face_id, target)
    if ready is not None:
        ready(bound)
    reporting = start_reporting(fw, warn_interval, status_interval,
                                on_report=writer.flush if writer else None)
    try:
        await stop.wait()
    finally:
        reporting.cancel()
        for close in closers:
            close()
        for face in list(fw.faces.values()):
            face.close()
        log.info("counters %s", json.dumps(fw.counters.status()))
        if writer is not None:
            writer.close()
            log.info("pcap %s: %d frames", pcap, writer.frames)
    return fw


def print_ready(bound: list[str]) -> None:
    """Tell a parent process where we listen (one line per URI, then READY)."""
    for uri in bound:
        sys.stdout.write(f"listening {uri}\n")
    sys.stdout.write("READY\n")
    sys.stdout.flush()
