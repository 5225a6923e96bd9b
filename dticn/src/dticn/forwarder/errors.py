"""Internal errors while processing a packet: logged with a bounded volume.

A bug in a pipeline, hook or strategy that one packet triggers, a peer can trigger for
every packet it sends; a traceback per packet would let it fill the disk and spend the
forwarder's time formatting tracebacks. So each error *site* (the exception type and
the innermost frame that raised it) logs its traceback at most once per ``interval``
seconds; the occurrences in between are counted, and the next traceback of that site
says how many there were. The packet is still dropped and counted by the caller
(``internal_error``), which the periodic drop report sums up.

Time comes from the caller's ``now`` (the forwarder's clock), as everywhere in the core.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger("dticn.forwarder")

Site = tuple[str, str, int]
"""(exception type, file, line) of the innermost frame of a traceback."""

MAX_SITES = 256
"""Sites remembered; beyond this the oldest is forgotten (it logs again when it recurs)."""


@dataclass(slots=True)
class _SiteState:
    last_logged: float
    suppressed: int = 0
    total: int = 1


class InternalErrorLog:
    """Rate-limited traceback logging, per error site.

    Args:
        now: the clock (seconds).
        interval: least time between two tracebacks of one site.
        logger: where the lines go.
    """

    def __init__(
        self, now: Callable[[], float], interval: float = 10.0,
        logger: logging.Logger = log,
    ) -> None:
        if interval < 0:
            raise ValueError(f"interval must be >= 0 seconds, got {interval}")
        self._now = now
        self.interval = interval
        self._log = logger
        self._sites: dict[Site, _SiteState] = {}

    def report(self, exc: BaseException, what: str) -> bool:
        """Record ``exc`` raised while doing ``what``; return True when its traceback
        was logged (the first time at its site, or ``interval`` after the last)."""
        site = site_of(exc)
        now = self._now()
        state = self._sites.get(site)
        if state is not None and now - state.last_logged < self.interval:
            state.suppressed += 1
            state.total += 1
            return False
        if state is None:
            if len(self._sites) >= MAX_SITES:
                del self._sites[next(iter(self._sites))]
            state = self._sites[site] = _SiteState(now)
            note = ""
        else:
            note = (f" ({state.suppressed} more at this site in the last "
                    f"{now - state.last_logged:.0f} s, {state.total + 1} in all; "
                    f"at most one traceback per {self.interval:g} s)")
            state.last_logged = now
            state.suppressed = 0
            state.total += 1
        self._log.error("internal error %s%s", what, note, exc_info=exc)
        return True

    def totals(self) -> dict[Site, int]:
        """Occurrences per site so far (for status and tests)."""
        return {site: s.total for site, s in self._sites.items()}


def site_of(exc: BaseException) -> Site:
    """Where ``exc`` was raised: its type and the innermost traceback frame."""
    tb = exc.__traceback__
    if tb is None:
        return (type(exc).__qualname__, "?", 0)
    while tb.tb_next is not None:
        tb = tb.tb_next
    return (type(exc).__qualname__, tb.tb_frame.f_code.co_filename, tb.tb_lineno)
