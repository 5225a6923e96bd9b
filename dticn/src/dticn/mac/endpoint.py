"""What the MACs' ends do alike: observer events and finishing a request (every MAC,
DSME and LoRaWAN: :class:`MacReporter`); sequence numbers and data frames (the coordinator
and the device MAC of DSME: :class:`MacEndpoint`).

Why base classes: every end must report requests the same way, or the observers (metrics,
energy, latency) would count the two ends of a link, or the two MACs, differently.
"""

from __future__ import annotations

from typing import Any, ClassVar

from dticn.mac.dsme_config import MacConfig
from dticn.mac.frames import BROADCAST, Frame, FrameKind
from dticn.mac.platform import MacEvent, MacObserver, MacRequest, Platform, Status


class MacReporter:
    """Observer events and request closing on the end's own clock (:meth:`_now`).

    Subclasses set ``address`` and ``observers`` in their constructor and say what time it
    is (``_now``): the platform's clock on DSME, the event kernel on LoRaWAN.
    """

    address: int
    observers: list[MacObserver]
    #: The event kind of a request refused because the queue was full: DSME's observers
    #: count it as "failed"; LoRaWAN keeps it apart as "drop" (its queue_drops counter).
    QUEUE_FULL_EVENT: ClassVar[str] = "failed"

    def _now(self) -> float:
        raise NotImplementedError(f"{type(self).__name__} must define _now() (its clock)")

    def _emit(self, kind: str, req: MacRequest | None = None, **detail: Any) -> None:
        """Tell every observer (no event object is built when nobody listens)."""
        if self.observers:
            event = MacEvent(self._now(), self.address, kind, req, detail)
            for observer in self.observers:
                observer(event)

    def _finish(self, req: MacRequest, status: Status) -> None:
        """Close ``req`` with ``status``: stamp it, report it, call its callback."""
        req.close(status, self._now())
        self._emit("delivered" if status is Status.DELIVERED else
                   self.QUEUE_FULL_EVENT if status is Status.QUEUE_FULL else "failed", req,
                   status=status.value)
        if req.on_result is not None:
            req.on_result(req)


class MacEndpoint(MacReporter):
    """Shared request bookkeeping of :class:`DsmeCoordinator` and :class:`DsmeDevice`.

    Subclasses set ``address``, ``p`` (the platform), ``cfg``, ``observers``,
    and ``_seq`` in their constructor.
    """

    address: int
    p: Platform
    cfg: MacConfig
    observers: list[MacObserver]
    _seq: int

    def _now(self) -> float:
        return self.p.clock.now()

    def _next_seq(self) -> int:
        """The next 8-bit data sequence number (DSN), wrapping as IEEE 802.15.4 does."""
        self._seq = (self._seq + 1) & 0xFF
        return self._seq

    def _data_frame(self, req: MacRequest) -> Frame:
        """The data frame for ``req``; unicast frames ask for an acknowledgement."""
        return Frame(FrameKind.DATA, self.address, req.dest, self._next_seq(),
                     len(req.payload) + self.cfg.data_overhead, req.payload,
                     ack_request=req.dest != BROADCAST)
