"""What the coordinator and the device MAC do alike: sequence numbers, data frames,
observer events and finishing a request.

Why a base class: both ends of a DSME link must number, frame and report requests the
same way, or the observers (metrics, energy, latency) would count the two ends differently.
"""

from __future__ import annotations

from typing import Any

from dticn.mac.dsme_config import MacConfig
from dticn.mac.frames import BROADCAST, Frame, FrameKind
from dticn.mac.platform import MacEvent, MacObserver, MacRequest, Platform, Status


class MacEndpoint:
    """Shared request bookkeeping of :class:`DsmeCoordinator` and :class:`DsmeDevice`.

    Subclasses set ``address``, ``p`` (the platform), ``cfg``, ``observers``,
    and ``_seq`` in their constructor.
    """

    address: int
    p: Platform
    cfg: MacConfig
    observers: list[MacObserver]
    _seq: int

    def _next_seq(self) -> int:
        """The next 8-bit data sequence number (DSN), wrapping as IEEE 802.15.4 does."""
        self._seq = (self._seq + 1) & 0xFF
        return self._seq

    def _data_frame(self, req: MacRequest) -> Frame:
        """The data frame for ``req``; unicast frames ask for an acknowledgement."""
        return Frame(FrameKind.DATA, self.address, req.dest, self._next_seq(),
                     len(req.payload) + self.cfg.data_overhead, req.payload,
                     ack_request=req.dest != BROADCAST)

    def _emit(self, kind: str, req: MacRequest | None = None, **detail: Any) -> None:
        """Tell every observer (no event object is built when nobody listens)."""
        if self.observers:
            event = MacEvent(self.p.clock.now(), self.address, kind, req, detail)
            for observer in self.observers:
                observer(event)

    def _finish(self, req: MacRequest, status: Status) -> None:
        """Close ``req`` with ``status``: stamp it, report it, call its callback."""
        req.close(status, self.p.clock.now())
        self._emit("delivered" if status is Status.DELIVERED else "failed", req,
                   status=status.value)
        if req.on_result is not None:
            req.on_result(req)
