"""The shared radio medium and the simulated transceiver (event-by-event path).

:class:`Medium` knows every frame on air; when one ends it decides, per intended
receiver, whether the receiver was listening on that channel and SF for the whole frame,
whether the signal was above sensitivity, and whether it survived the overlapping frames
on the same channel (:class:`~dticn.phy.interference.InterferenceModel`). Frames on other
channels never interact. Receivers are :class:`Listener` objects, so a MAC may listen
through a live :class:`SimRadio` or, for a mains-powered coordinator whose energy is not
modelled, through its schedule.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from dticn.energy.model import EnergyMeter
from dticn.mac.frames import BROADCAST, Frame
from dticn.mac.states import RADIO_TRANSITIONS, RadioEvent, RadioState, fire
from dticn.phy.interference import InterferenceModel
from dticn.sim.kernel import EventKernel

#: Priority of end-of-frame events: before any MAC timer due at the same instant.
END_OF_FRAME_PRIORITY = -10


@dataclass(eq=False)
class Transmission:
    sender: int
    channel: int
    sf: int
    power_dbm: float
    start: float
    end: float
    frame: Frame


class Listener(Protocol):
    """A receiver as the medium sees it."""

    def listening(self, channel: int, sf: int, start: float) -> bool:
        """True when it has been receiving on ``channel``/``sf`` since ``start`` or earlier."""

    def preamble(self, tx: Transmission) -> None:
        """A frame it may receive starts now (the radio locks on and stays in RX)."""

    def deliver(self, tx: Transmission, rssi_dbm: float, margin_db: float) -> None:
        """A frame arrived intact."""


@dataclass
class MediumStats:
    frames: int = 0
    delivered: int = 0
    collisions: int = 0
    below_sensitivity: int = 0
    not_listening: int = 0


class Medium:
    """All transmissions of one simulated LoRa network."""

    def __init__(self, kernel: EventKernel, interference: InterferenceModel,
                 sensitivity_dbm: Callable[[int], float], link_loss_db: Callable[[int, int], float],
                 *, fading_sigma_db: float = 0.0, rng: np.random.Generator | None = None,
                 max_airtime_s: float = 10.0) -> None:
        if fading_sigma_db and rng is None:
            raise ValueError("fading needs an rng: pass the scenario's numpy Generator")
        self.kernel = kernel
        self.interference = interference
        self.sensitivity_dbm = sensitivity_dbm
        self.link_loss_db = link_loss_db
        self.fading_sigma_db = fading_sigma_db
        self._rng = rng
        self._max_airtime = max_airtime_s
        self._listeners: dict[int, Listener] = {}
        self._always: dict[int, Listener] = {}          # schedule-based listeners
        self._rx_on: dict[int, set[int]] = {}           # channel -> radios now in RX
        self._on_air: dict[int, list[Transmission]] = {}
        self.stats = MediumStats()
        self.observers: list[Callable[[str, Transmission, int], None]] = []

    def attach(self, address: int, listener: Listener, *, always: bool = False) -> None:
        """Register a receiver; ``always``: it listens by schedule, not through a radio."""
        self._listeners[address] = listener
        if always:
            self._always[address] = listener

    def rx_started(self, address: int, channel: int) -> None:
        """A radio entered RX on ``channel`` (broadcasts are offered only to such radios)."""
        self._rx_on.setdefault(channel, set()).add(address)

    def rx_stopped(self, address: int, channel: int) -> None:
        self._rx_on.get(channel, set()).discard(address)

    def rssi_dbm(self, sender: int, receiver: int, power_dbm: float) -> float:
        rssi = power_dbm - self.link_loss_db(sender, receiver)
        if self.fading_sigma_db:
            assert self._rng is not None
            rssi += float(self._rng.normal(0.0, self.fading_sigma_db))
        return rssi

    def _receivers(self, frame: Frame, sender: int, channel: int
                   ) -> list[tuple[int, Listener]]:
        if frame.dst == BROADCAST:
            out = [(a, lst) for a, lst in self._always.items() if a != sender]
            out += [(a, self._listeners[a]) for a in sorted(self._rx_on.get(channel, ()))
                    if a != sender and a not in self._always]
            return out
        listener = self._listeners.get(frame.dst)
        return [(frame.dst, listener)] if listener is not None else []

    def transmit(self, sender: int, channel: int, sf: int, power_dbm: float, frame: Frame,
                 airtime_s: float) -> Transmission:
        """Put ``frame`` on air now for ``airtime_s``; its fate is decided when it ends."""
        now = self.kernel.now()
        tx = Transmission(sender, channel, sf, power_dbm, now, now + airtime_s, frame)
        on_air = self._on_air.setdefault(channel, [])
        horizon = now - self._max_airtime
        if on_air and on_air[0].end < horizon:
            on_air[:] = [o for o in on_air if o.end >= horizon]
        on_air.append(tx)
        self.stats.frames += 1
        for _, listener in self._receivers(frame, sender, channel):
            if listener.listening(channel, sf, now):
                listener.preamble(tx)
        self.kernel.call_at(tx.end, self._finish, tx, priority=END_OF_FRAME_PRIORITY)
        return tx

    def channel_active(self, observer: int, channel: int, sf: int, start: float, end: float
                       ) -> bool:
        """CAD: a same-SF frame on ``channel`` overlapping [start, end], audible at ``observer``."""
        for o in self._on_air.get(channel, ()):
            if o.sf == sf and o.sender != observer and o.start < end and o.end > start:
                loss = self.link_loss_db(o.sender, observer)
                if o.power_dbm - loss >= self.sensitivity_dbm(o.sf):
                    return True
        return False

    def _finish(self, tx: Transmission) -> None:
        overlapping = [o for o in self._on_air.get(tx.channel, ())
                       if o is not tx and o.start < tx.end and o.end > tx.start]
        for address, listener in self._receivers(tx.frame, tx.sender, tx.channel):
            if not listener.listening(tx.channel, tx.sf, tx.start):
                self.stats.not_listening += 1
                continue
            rssi = self.rssi_dbm(tx.sender, address, tx.power_dbm)
            margin = rssi - self.sensitivity_dbm(tx.sf)
            if margin < 0:
                self.stats.below_sensitivity += 1
                self._notify("below_sensitivity", tx, address)
                continue
            interferers = [(o.sf, self.rssi_dbm(o.sender, address, o.power_dbm))
                           for o in overlapping if o.sender != address]
            if interferers and not self.interference.survives(tx.sf, rssi, interferers):
                self.stats.collisions += 1
                self._notify("collision", tx, address)
                continue
            self.stats.delivered += 1
            listener.deliver(tx, rssi, margin)

    def _notify(self, what: str, tx: Transmission, receiver: int) -> None:
        for observer in self.observers:
            observer(what, tx, receiver)


class SimRadio:
    """An SX1276-like transceiver in simulation: state table, energy meter, medium access.

    Every state change goes through :data:`~dticn.mac.states.RADIO_TRANSITIONS`; an
    illegal one raises, so the energy booked per state is the time the MAC really spent.
    """

    def __init__(self, address: int, kernel: EventKernel, medium: Medium, sf: int,
                 power_dbm: float, meter: EnergyMeter | None = None) -> None:
        self.address = address
        self.kernel = kernel
        self.medium = medium
        self.sf = sf
        self.power_dbm = power_dbm
        self.meter = meter if meter is not None else EnergyMeter(since=kernel.now())
        self.state = RadioState.SLEEP
        self.channel = -1
        self.rx_since = float("inf")
        self.receiving_until = -1.0
        self.on_frame: Callable[[Transmission, float, float], None] | None = None

    def _go(self, event: RadioEvent, power: float | None = None) -> None:
        new = fire(RADIO_TRANSITIONS, self.state, event)
        self.meter.transition(new, self.kernel.now(), power)
        if self.state is RadioState.RX and new is not RadioState.RX:
            self.rx_since = float("inf")
            self.medium.rx_stopped(self.address, self.channel)
        self.state = new

    def wake(self) -> None:
        self._go(RadioEvent.WAKE)

    def sleep(self) -> None:
        if self.state is not RadioState.STANDBY:
            self.idle()
        self._go(RadioEvent.SLEEP)

    def idle(self) -> None:
        if self.state is not RadioState.STANDBY:
            self._go(RadioEvent.IDLE)

    def start_rx(self, channel: int) -> None:
        self._go(RadioEvent.START_RX)
        self.channel = channel
        self.rx_since = self.kernel.now()
        self.medium.rx_started(self.address, channel)

    def receiving(self) -> bool:
        """A frame is being received (preamble locked, not yet ended)."""
        return self.state is RadioState.RX and self.receiving_until > self.kernel.now()

    def transmit(self, channel: int, frame: Frame, airtime_s: float,
                 on_done: Callable[[], Any]) -> Transmission:
        self._go(RadioEvent.START_TX, self.power_dbm)
        self.channel = channel
        tx = self.medium.transmit(self.address, channel, self.sf, self.power_dbm, frame,
                                  airtime_s)
        self.kernel.call_at(tx.end, on_done)
        return tx

    def cad(self, channel: int, duration_s: float, on_result: Callable[[bool], Any]) -> None:
        """Channel activity detection for ``duration_s``; ``on_result(idle)`` at its end."""
        self._go(RadioEvent.START_CAD)
        start = self.kernel.now()

        def done() -> None:
            busy = self.medium.channel_active(self.address, channel, self.sf, start,
                                              self.kernel.now())
            self._go(RadioEvent.IDLE)
            on_result(not busy)

        self.kernel.call_later(duration_s, done)

    # Listener protocol -------------------------------------------------------------
    def listening(self, channel: int, sf: int, start: float) -> bool:
        return (self.state is RadioState.RX and self.channel == channel and sf == self.sf
                and self.rx_since <= start)

    def preamble(self, tx: Transmission) -> None:
        self.receiving_until = max(self.receiving_until, tx.end)

    def deliver(self, tx: Transmission, rssi_dbm: float, margin_db: float) -> None:
        if self.on_frame is not None:
            self.on_frame(tx, rssi_dbm, margin_db)
