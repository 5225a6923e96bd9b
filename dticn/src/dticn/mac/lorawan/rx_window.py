"""A LoRaWAN device's receive windows: RX1 and RX2 after an uplink (class A), the beacon
window and the ping slots (class B) all open and close here.

A window wakes the radio at its SF, receives on its channel for ``window_s`` (LoRaMac-node's
timeout), and, when that time is up, puts the radio back to sleep at the device's own SF,
unless a frame whose preamble it caught is still arriving: then it stays open to the
frame's end (the medium hands the frame over as it ends). Who opened the window is told
how long it listened and decides what comes next (RX2 after an empty RX1, a beacon
counted, the attempt's end).
"""

from __future__ import annotations

from collections.abc import Callable

from dticn.phy.radio import SimRadio
from dticn.sim.kernel import EventKernel

#: After the frame-end events of the medium (priority -10), before ordinary timers.
RELEASE_PRIORITY = -5


class ReceiveWindow:
    """The one receiver of a device; one window at a time (class B skips its windows
    while a class A transaction holds the radio)."""

    def __init__(self, kernel: EventKernel, radio: SimRadio, home_sf: int) -> None:
        """``home_sf``: the SF the radio returns to when a window closes (the uplink's)."""
        self.kernel = kernel
        self.radio = radio
        self.home_sf = home_sf
        #: When the last window opened closes (later once a frame arriving holds it).
        self.open_until = -1.0

    def open(self, channel: int, sf: int, window_s: float,
             on_close: Callable[[float], object]) -> None:
        """Listen on ``channel`` at ``sf`` from now for ``window_s``; ``on_close(listened_s)``
        when the window has closed and the radio sleeps."""
        self.radio.sf = sf
        self.radio.wake()
        self.radio.start_rx(channel)
        opened = self.kernel.now()
        self.open_until = opened + window_s
        self.kernel.call_later(window_s, self._close, opened, on_close)

    def _close(self, opened: float, on_close: Callable[[float], object]) -> None:
        if self.radio.receiving():     # a preamble was caught: stay for the whole frame
            self.kernel.call_at(self.radio.receiving_until, self._close, opened, on_close,
                                priority=RELEASE_PRIORITY)
            self.open_until = self.radio.receiving_until
            return
        self.radio.idle()
        self.radio.sleep()
        self.radio.sf = self.home_sf
        on_close(self.kernel.now() - opened)
