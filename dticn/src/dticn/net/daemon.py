"""Run the forwarder over real sockets: the process behind ``dticn forwarder``."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Sequence

from dticn.forwarder.forwarder import Forwarder
from dticn.forwarder.settings import ForwarderConfig
from dticn.mgmt.command_auth import CommandAuthenticator
from dticn.mgmt.nfd import NfdManagement
from dticn.net.asyncio_clock import AsyncioClock
from dticn.net.listen import DEFAULT_BACKLOG, DEFAULT_UNIX_MODE
from dticn.net.report import start_reporting
from dticn.net.serving import print_listening, serving

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
    Listeners, routes and their errors are :func:`dticn.net.serving.serving`'s
    (``backlog`` and ``unix_mode`` go to its listeners).
    Drops are logged at most once per ``warn_interval`` and counters every
    ``status_interval`` (:mod:`dticn.net.report`); ``dticn status`` asks at any time.
    ``pcap`` names a file that receives every frame of every face
    (:class:`dticn.net.pcap.PcapWriter`; flushed with each status report).
    ``authenticator`` checks signed prefix-registration commands against trust anchors
    (:mod:`dticn.mgmt.command_auth`); None: NFD's localhost default.
    """
    clock = AsyncioClock(time_scale=time_scale)
    fw = Forwarder(clock, config)
    NfdManagement(fw, authenticator=authenticator)
    async with serving(fw, listen, routes=routes, stop=stop, backlog=backlog,
                       unix_mode=unix_mode, pcap=pcap) as up:
        if ready is not None:
            ready(up.bound)
        trace = up.trace
        reporting = start_reporting(fw, warn_interval, status_interval,
                                    on_report=trace.flush if trace else None)
        try:
            await up.stop.wait()
        finally:
            reporting.cancel()
    log.info("counters %s", json.dumps(fw.counters.status()))
    return fw


def print_ready(bound: list[str]) -> None:
    """Tell a parent process where we listen (one line per URI, then READY)."""
    print_listening(bound)
