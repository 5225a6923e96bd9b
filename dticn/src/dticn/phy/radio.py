"""The simulated transceivers: what a MAC's platform hands it as ``radio``.

:class:`SimRadio` is an SX1276-like end-node radio with a state table and an energy meter;
:class:`CoordinatorRadio` is the mains-powered gateway's, whose energy is not modelled and
which listens by schedule (its MAC is the medium's listener). Both put frames on the
:class:`~dticn.phy.medium.Medium` and run channel activity detection against it; the MAC
above sees only the operations of :class:`dticn.mac.platform.RadioDriver`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

from dticn.phy.medium import Medium, Transmission
from dticn.phy.radio_states import RADIO_TRANSITIONS, RadioEvent, RadioState, fire
from dticn.sim.kernel import EventKernel


class StateMeter(Protocol):
    """Where a radio books the time it spends in each state (an energy meter)."""

    def transition(self, state: RadioState, now: float, tx_power_dbm: float | None = None
                   ) -> None: ...


class SimRadio:
    """An SX1276-like transceiver in simulation: state table, energy meter, medium access.

    Every state change goes through :data:`~dticn.phy.radio_states.RADIO_TRANSITIONS`; an
    illegal one raises, so the energy booked per state is the time the MAC really spent.
    """

    def __init__(self, address: int, kernel: EventKernel, medium: Medium, sf: int,
                 power_dbm: float, meter: StateMeter) -> None:
        self.address = address
        self.kernel = kernel
        self.medium = medium
        self.sf = sf
        self.power_dbm = power_dbm
        self.meter = meter
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

    def transmit(self, channel: int, dst: int, frame: object, airtime_s: float,
                 on_done: Callable[[], Any]) -> Transmission:
        self._go(RadioEvent.START_TX, self.power_dbm)
        self.channel = channel
        tx = self.medium.transmit(self.address, dst, channel, self.sf, self.power_dbm, frame,
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


class CoordinatorRadio:
    """The gateway transceiver: transmit and CAD through the medium, no energy states.

    It never sleeps and never locks onto a frame (the coordinator's MAC decides from its
    schedule what it hears), so the state is always standby and it is never receiving.
    """

    state = RadioState.STANDBY
    receiving_until = -1.0

    def __init__(self, address: int, kernel: EventKernel, medium: Medium, sf: int,
                 power_dbm: float) -> None:
        self.address = address
        self.kernel = kernel
        self.medium = medium
        self.sf = sf
        self.power_dbm = power_dbm
        self.tx_intervals: deque[tuple[float, float]] = deque(maxlen=8)

    def wake(self) -> None: ...
    def sleep(self) -> None: ...
    def idle(self) -> None: ...
    def start_rx(self, channel: int) -> None: ...

    def receiving(self) -> bool:
        return False

    def transmitting_during(self, start: float, end: float) -> bool:
        """Half duplex: True when one of its recent transmissions overlaps [start, end]."""
        return any(s < end and e > start for s, e in self.tx_intervals)

    def transmit(self, channel: int, dst: int, frame: object, airtime_s: float,
                 on_done: Callable[[], Any]) -> Transmission:
        tx = self.medium.transmit(self.address, dst, channel, self.sf, self.power_dbm, frame,
                                  airtime_s)
        self.tx_intervals.append((tx.start, tx.end))
        self.kernel.call_at(tx.end, on_done)
        return tx

    def cad(self, channel: int, duration_s: float, on_result: Callable[[bool], Any]) -> None:
        start = self.kernel.now()

        def done() -> None:
            on_result(not self.medium.channel_active(self.address, channel, self.sf, start,
                                                     self.kernel.now()))

        self.kernel.call_later(duration_s, done)
