"""How a device's periodic upkeep is simulated: waking for every beacon, every downlink GTS
and (``cap_rx``) every CAP.

Two strategies, registered by name in :data:`UPKEEP`:

* ``"events"`` (:class:`EventUpkeep`): the windows of :mod:`dticn.mac.receive_windows` run as
  events through the radio's state table; exact, and as slow as the number of windows.
* ``"closed"`` (:class:`ClosedFormUpkeep`, the default): no window runs; the node answers
  the medium as if its receiver were on in them (while its radio sleeps) and
  :mod:`dticn.radio.upkeep_closed_form` books their time in closed form at the end of a run. Frames
  always run as events. What the closed form cannot know is kept here: RX beyond a window
  (a frame longer than ``gts_rx_window_s``) and, with ``cap_rx``, CAP time the node's own
  CAP transactions held the radio (already booked live, so not idle listening).

Tests in ``tests/radio/test_engines.py`` check that the two agree.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from dticn.energy.model import EnergyMeter
from dticn.mac.cap import CapAccess
from dticn.mac.dsme_config import MacConfig
from dticn.mac.gts import Gts
from dticn.mac.platform import Platform
from dticn.mac.receive_windows import BeaconWindow, ListenWindows
from dticn.phy.medium import Transmission
from dticn.phy.radio_states import RadioState


class Upkeep(Protocol):
    """What the device asks its upkeep strategy."""

    #: CAP time the node's own CAP transactions held the radio (closed form with cap_rx).
    cap_held_s: float

    def begin(self, now: float) -> None:
        """The node started tracking beacons at ``now``."""

    def listening(self, channel: int, sf: int, start: float) -> bool:
        """Beyond its radio: does the node receive a frame on ``channel``/``sf`` that
        started at ``start``?"""

    def received(self, tx: Transmission) -> None:
        """A data frame was delivered to the node (by the medium)."""


class UpkeepParts(Protocol):
    """The parts of a device a strategy works with."""

    p: Platform
    cfg: MacConfig
    meter: EnergyMeter
    cap: CapAccess
    windows: ListenWindows
    downlink: list[Gts]

    @property
    def beacons(self) -> BeaconWindow: ...

    @property
    def tracking_beacons(self) -> bool: ...


class EventUpkeep:
    """Every window as events (exact, slow)."""

    def __init__(self, device: UpkeepParts) -> None:
        self.device = device
        self.cap_held_s = 0.0

    def begin(self, now: float) -> None:
        dev = self.device
        dev.beacons.follow(now)
        for cell in dev.downlink:
            dev.windows.follow_downlink(cell, now)
        if dev.cfg.cap_rx:
            dev.windows.follow_cap(now)

    def listening(self, channel: int, sf: int, start: float) -> bool:
        return False          # the radio itself is in RX in every window

    def received(self, tx: Transmission) -> None:
        return None           # the radio's state table booked the RX


class ClosedFormUpkeep:
    """No window as an event; the node hears as if its windows ran (see module docstring)."""

    def __init__(self, device: UpkeepParts) -> None:
        self.device = device
        self.cap_held_s = 0.0
        self._held_since: float | None = None
        if device.cfg.cap_rx:
            device.cap.on_hold = self._cap_hold

    def begin(self, now: float) -> None:
        return None

    def listening(self, channel: int, sf: int, start: float) -> bool:
        dev = self.device
        radio = dev.p.radio
        if sf != radio.sf or not dev.tracking_beacons:
            return False
        if self._downlink_window(channel, start) is not None:
            return radio.state is RadioState.SLEEP
        if dev.cfg.cap_rx and channel == dev.cfg.cap_channel:
            return dev.cfg.timing.in_cap(start) and radio.state is RadioState.SLEEP
        return False

    def received(self, tx: Transmission) -> None:
        """Book the RX of a frame that lasted beyond its closed-form downlink window."""
        dev = self.device
        if dev.p.radio.state is RadioState.RX:
            return            # the radio really listened: its state table booked it
        t0 = self._downlink_window(tx.channel, tx.start)
        if t0 is not None:
            extra = tx.end - t0 - dev.cfg.gts_rx_window_s
            if extra > 0:
                dev.meter.add(RadioState.RX, extra)

    def _downlink_window(self, channel: int, start: float) -> float | None:
        """Start of the downlink window on ``channel`` that covers ``start`` (None: none)."""
        cfg = self.device.cfg
        timing = cfg.timing
        for cell in self.device.downlink:
            if cell.channel != channel:
                continue
            t0 = timing.next_periodic(cell.offset(timing), timing.multisuperframe_s,
                                      start - cfg.gts_rx_window_s)
            if t0 <= start + 1e-9:
                return t0
        return None

    def _cap_hold(self, taken: bool) -> None:
        now = self.device.p.clock.now()
        if taken:
            self._held_since = now
            return
        if self._held_since is None:
            return
        timing = self.device.cfg.timing
        cap_start, cap_end = timing.cap_window(int(self._held_since // timing.superframe_s))
        overlap = min(now, cap_end) - max(self._held_since, cap_start)
        if overlap > 0:
            self.cap_held_s += overlap
        self._held_since = None


UPKEEP: dict[str, Callable[[UpkeepParts], Upkeep]] = {
    "closed": ClosedFormUpkeep,
    "events": EventUpkeep,
}
"""Upkeep strategies by the name a scenario gives (``Scenario.upkeep``)."""
