"""A device's timed receive windows: the beacon, its downlink GTS and the CAP (``cap_rx``).

Each window wakes the radio ``wakeup_s`` before it opens, receives on its channel and puts
the radio back to sleep when it closes; a window that closes while a frame is arriving
stays open until the frame ends (:meth:`~dticn.mac.platform.Platform.after_reception`).
Only the event-by-event upkeep strategy (:mod:`dticn.mac.upkeep`) runs them; the
closed-form one books the same windows without waking the node.

Timings (IEEE 802.15.4-2015, 6.2.1; settings in ``dsme.toml``):

* beacon: RX from ``beacon_guard_s`` before each beacon interval starts to the beacon's end
  plus the guard (the node's clock may be early or late by that much);
* downlink GTS: RX for ``gts_rx_window_s`` from the cell's start, every multisuperframe;
* CAP: RX through slots 1..cap_slots of every superframe.
"""

from __future__ import annotations

from collections.abc import Callable

from dticn.clock import TimerHandle
from dticn.mac.cap import CapAccess
from dticn.mac.dsme_config import MacConfig
from dticn.mac.gts import Gts
from dticn.mac.platform import Platform
from dticn.phy.radio_states import RadioState


class BeaconWindow:
    """The receive window around every beacon while the node tracks them."""

    def __init__(self, platform: Platform, config: MacConfig, beacon_s: float, *,
                 on_missed: Callable[[], bool]) -> None:
        """``on_missed()``: a window closed without a beacon; True to keep following them
        (False: the node stops, e.g. it lost synchronisation and scans instead)."""
        self.p = platform
        self.cfg = config
        self.beacon_s = beacon_s
        self._on_missed = on_missed
        self._timer: TimerHandle | None = None

    @property
    def open(self) -> bool:
        return self._timer is not None

    def follow(self, after: float) -> None:
        """Plan the window of the first beacon whose window opens after ``after``."""
        timing, cfg = self.cfg.timing, self.cfg
        lead = cfg.beacon_guard_s + cfg.wakeup_s
        beacon_at = timing.next_periodic(0.0, timing.beacon_interval_s, after + lead)
        self.p.clock.call_later(beacon_at - lead - self.p.clock.now(), self._wake, beacon_at)

    def heard(self) -> bool:
        """A beacon arrived: close the window; False when none was open (heard while the
        radio listened for something else)."""
        if self._timer is None:
            return False
        self._timer.cancel()
        self._timer = None
        return True

    def _wake(self, beacon_at: float) -> None:
        if self.p.radio.state is not RadioState.SLEEP:
            self.follow(beacon_at)     # busy (should not happen): skip this one
            return
        self.p.radio.wake()
        self.p.clock.call_later(self.cfg.wakeup_s, self._open, beacon_at)

    def _open(self, beacon_at: float) -> None:
        self.p.radio.start_rx(self.cfg.beacon_channel)
        close = beacon_at + self.beacon_s + self.cfg.beacon_guard_s
        self._timer = self.p.clock.call_later(close - self.p.clock.now(), self._close,
                                              beacon_at)

    def _close(self, beacon_at: float) -> None:
        rearmed = self.p.after_reception(self._close, beacon_at)
        if rearmed is not None:
            self._timer = rearmed
            return
        self._timer = None
        self.p.radio.sleep()
        if self._on_missed():
            self.follow(beacon_at)


class ListenWindows:
    """Downlink-GTS windows and listening through the CAP, and who gets the radio when a
    slot begins while the node listens."""

    def __init__(self, platform: Platform, config: MacConfig, cap: CapAccess) -> None:
        self.p = platform
        self.cfg = config
        self.cap = cap
        #: Inside a CAP the node listens through (``cap_rx`` with event-by-event upkeep).
        self.in_cap_listen = False

    def take_radio(self) -> bool:
        """Get the radio to standby for a slot: wake it, or end listening through the CAP
        (the CAP ends where the first GTS begins); False when it is busy."""
        state = self.p.radio.state
        if state is RadioState.SLEEP:
            self.p.radio.wake()
            return True
        if (state is RadioState.RX and self.in_cap_listen and not self.cap.busy
                and not self.p.radio.receiving()):
            self.p.radio.idle()
            return True
        return False

    def cap_idle(self) -> None:
        """The CAP's idle policy between its steps: back to RX while listening through the
        CAP, else sleep."""
        radio = self.p.radio
        state = radio.state
        if self.in_cap_listen:
            if state is RadioState.SLEEP:
                radio.wake()
            elif state is not RadioState.STANDBY and state is not RadioState.RX:
                radio.idle()
            if radio.state is RadioState.STANDBY:
                radio.start_rx(self.cfg.cap_channel)
        elif state is not RadioState.SLEEP:
            radio.sleep()

    # -- downlink GTS ---------------------------------------------------------------------
    def follow_downlink(self, cell: Gts, after: float) -> None:
        """Plan the window of ``cell``'s first occurrence that starts after ``after``."""
        timing = self.cfg.timing
        when = timing.next_periodic(cell.offset(timing), timing.multisuperframe_s,
                                    after + self.cfg.wakeup_s)
        self.p.clock.call_later(when - self.cfg.wakeup_s - self.p.clock.now(),
                                self._downlink_wake, cell, when)

    def _downlink_wake(self, cell: Gts, when: float) -> None:
        if not self.take_radio():
            self.follow_downlink(cell, when)
            return
        self.p.clock.call_later(self.cfg.wakeup_s, self._downlink_open, cell, when)

    def _downlink_open(self, cell: Gts, when: float) -> None:
        self.p.radio.start_rx(cell.channel)
        self.p.clock.call_later(self.cfg.gts_rx_window_s, self._downlink_close, cell, when)

    def _downlink_close(self, cell: Gts, when: float) -> None:
        radio = self.p.radio
        if self.p.after_reception(self._downlink_close, cell, when) is not None:
            return
        if radio.state is RadioState.RX and radio.channel == cell.channel:
            radio.sleep()
        self.follow_downlink(cell, when)

    # -- CAP ------------------------------------------------------------------------------
    def follow_cap(self, after: float) -> None:
        """Plan listening through the first CAP that starts after ``after``."""
        timing = self.cfg.timing
        start = timing.next_periodic(timing.slot_s, timing.superframe_s,
                                     after + self.cfg.wakeup_s)
        self.p.clock.call_later(start - self.cfg.wakeup_s - self.p.clock.now(),
                                self._cap_wake, start)

    def _cap_wake(self, start: float) -> None:
        self.in_cap_listen = True
        length = self.cfg.timing.cap_slots * self.cfg.timing.slot_s
        self.p.clock.call_later(start + length - self.p.clock.now(), self._cap_close, start)
        if self.p.radio.state is RadioState.SLEEP:
            self.p.radio.wake()
            self.p.clock.call_later(self.cfg.wakeup_s, self._cap_open)
        # else: a CAP transaction holds the radio; its idle policy returns to RX after it.

    def _cap_open(self) -> None:
        if self.in_cap_listen and self.p.radio.state is RadioState.STANDBY:
            self.p.radio.start_rx(self.cfg.cap_channel)

    def _cap_close(self, start: float) -> None:
        radio = self.p.radio
        if self.p.after_reception(self._cap_close, start) is not None:
            return
        self.in_cap_listen = False
        # Sleep unless a CAP transaction is waiting for its ACK right now (a transaction
        # that only waits for its next backoff wakes the radio itself when it needs it).
        if (radio.state is RadioState.RX
                and radio.channel == self.cfg.cap_channel
                and not self.cap.awaiting_ack):
            radio.sleep()
        self.follow_cap(start)
