"""Waiting for the acknowledgement of one transmitted frame (IEEE 802.15.4 Imm-Ack).

The CAP, the device's uplink GTS and the coordinator's downlink GTS all send a frame, wait
``2 x turnaround + ACK airtime`` for the ACK carrying the frame's sequence number, and retry
or give up when it does not come. What differs is what they do then (next CSMA/CA attempt,
next slot, next queued frame), so this class only waits: it calls ``on_ack`` or
``on_timeout``, once. A window that closes while a frame is still arriving stays open until
that frame ends (:meth:`~dticn.mac.platform.Platform.after_reception`): it may be the ACK.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dticn.clock import TimerHandle
from dticn.mac.platform import Platform


class AckWait:
    """At most one frame waiting for its ACK (see module docstring)."""

    def __init__(self, platform: Platform, window_s: float) -> None:
        self.p = platform
        self.window_s = window_s
        self.seq: int | None = None
        self._timer: TimerHandle | None = None
        self._on_ack: Callable[[], Any] | None = None
        self._on_timeout: Callable[[], Any] | None = None

    @property
    def waiting(self) -> bool:
        """A frame's ACK is awaited right now."""
        return self._timer is not None

    def expect(self, seq: int, on_ack: Callable[[], Any], on_timeout: Callable[[], Any], *,
               after_s: float | None = None) -> None:
        """Wait for the ACK of frame ``seq``: ``window_s`` from now, or ``after_s`` (a sender
        that does not wait for its own frame's end counts the airtime in)."""
        if self._timer is not None:
            raise RuntimeError(f"already waiting for the ACK of frame {self.seq}; one "
                               "acknowledged transmission at a time")
        self.seq = seq
        self._on_ack = on_ack
        self._on_timeout = on_timeout
        self._timer = self.p.clock.call_later(self.window_s if after_s is None else after_s,
                                              self._expired)

    def on_ack(self, seq: int) -> bool:
        """An ACK arrived; True (and ``on_ack`` called) when it is the one awaited."""
        if self._timer is None or seq != self.seq:
            return False
        self._timer.cancel()
        callback = self._clear()[0]
        callback()
        return True

    def _expired(self) -> None:
        rearmed = self.p.after_reception(self._expired)
        if rearmed is not None:
            self._timer = rearmed
            return
        callback = self._clear()[1]
        callback()

    def _clear(self) -> tuple[Callable[[], Any], Callable[[], Any]]:
        on_ack, on_timeout = self._on_ack, self._on_timeout
        assert on_ack is not None and on_timeout is not None
        self._timer = self._on_ack = self._on_timeout = None
        self.seq = None
        return on_ack, on_timeout
