"""Periodic log lines of a running forwarder: drops as rate-limited warnings, counters
as a status line.

Drops that mean a limit protected the forwarder (a face over its PIT quota, a name too
long, a registration refused, ...) are worth an operator's attention; but one line per
dropped packet would let the client that causes them drive the log volume. So drops are
summed and reported at most once per ``warn_interval`` (WARNING when a limit drop is
among them, DEBUG for routine ones such as ``no_route`` or ``unsolicited_data``), and the
counters go out as one INFO line every ``status_interval`` while anything changed.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import Counter
from collections.abc import Callable

from dticn.forwarder.forwarder import Forwarder

log = logging.getLogger(__name__)

LIMIT_DROPS = frozenset({
    "pit_full", "pit_face_quota", "name_too_long", "routes_per_face",
    "registration_not_local", "send_buffer_full", "oversized_frame", "udp_face_limit",
    "malformed", "internal_error", "cs_pinned_full", "command_bad_signature",
    "command_untrusted", "command_unsigned", "command_stale", "command_replayed",
})
"""Drop reasons that mean a limit or a misbehaving peer, reported at WARNING."""


class DropReporter:
    """Diff ``fw.counters.drops`` since the last report; the caller decides when."""

    def __init__(self, fw: Forwarder) -> None:
        self._fw = fw
        self._seen: Counter[str] = Counter(fw.counters.drops)
        self._last_status: str = ""

    def report_drops(self, interval_s: float) -> Counter[str]:
        """Log the drops since the last call; return them."""
        now = self._fw.counters.drops
        new = Counter({k: v - self._seen.get(k, 0) for k, v in now.items()
                       if v > self._seen.get(k, 0)})
        self._seen = Counter(now)
        if new:
            level = logging.WARNING if LIMIT_DROPS.intersection(new) else logging.DEBUG
            log.log(level, "dropped in the last %g s: %s", interval_s,
                    ", ".join(f"{k} {v}" for k, v in sorted(new.items())))
        return new

    def report_status(self) -> None:
        """One INFO line of counters and table sizes, when they changed."""
        fw = self._fw
        line = json.dumps({
            "faces": len(fw.faces), "fib": len(fw.fib), "pit": len(fw.pit), "cs": len(fw.cs),
            **fw.counters.status(),
        })
        if line != self._last_status:
            self._last_status = line
            log.info("status %s", line)


def start_reporting(
    fw: Forwarder, warn_interval: float = 10.0, status_interval: float = 60.0,
    on_report: Callable[[], None] | None = None,
) -> asyncio.Task[None]:
    """Run a :class:`DropReporter` on the running loop until the task is cancelled;
    ``status_interval`` 0 turns the status line off; ``on_report`` runs after each drop
    report (the pcap writer flushes there)."""
    reporter = DropReporter(fw)

    async def loop() -> None:
        since_status = 0.0
        while True:
            await asyncio.sleep(warn_interval)
            reporter.report_drops(warn_interval)
            if on_report is not None:
                on_report()
            since_status += warn_interval
            if status_interval and since_status >= status_interval:
                since_status = 0.0
                reporter.report_status()

    return asyncio.get_running_loop().create_task(loop())
