"""A platform for driving one MAC core alone: the test plays the medium.

A test double, like :class:`~dticn.forwarder.face.RecordingFace` for the forwarder. The
device or coordinator runs unchanged on the real event kernel (a heap of timers,
deterministic) as its clock, a seeded :class:`random.Random`, a real duty-cycle book and
the real transceiver (:class:`~dticn.phy.radio.SimRadio`, whose state table refuses an
illegal step, or the gateway's :class:`~dticn.phy.radio.CoordinatorRadio`); only the
medium is replaced by :class:`FakeMedium`, which

* records every state the node's radio enters (:attr:`FakeMedium.log`, with the channel
  of RX and TX) and every frame sent (:attr:`FakeMedium.sent`), with the time;
* answers CAD from :attr:`FakeMedium.busy_channels`;
* offers the test's frames to the MAC as the medium does (:meth:`FakeMedium.send`:
  preamble at the start if the MAC listens, delivery at the end if it listened
  throughout). No propagation, no collisions: those are the medium's own tests.

So a test sets a scene ("a beacon at t", "no ACK"), runs the kernel and asserts what the
MAC did and when, in times derived from :mod:`dticn.mac.timing`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Protocol

from dticn.mac.frames import Frame
from dticn.mac.platform import MacEvent, Platform
from dticn.phy.airtime import LoRaParams
from dticn.phy.channels import ChannelPlan
from dticn.phy.dutycycle import DutyCycleTracker
from dticn.phy.medium import END_OF_FRAME_PRIORITY, Transmission
from dticn.phy.radio import CoordinatorRadio, SimRadio
from dticn.phy.radio_states import RadioState
from dticn.sim.kernel import EventKernel

TX_POWER_DBM = 14.0


@dataclass(frozen=True)
class Sent:
    """One frame the MAC's radio put on air."""

    time: float
    channel: int
    dst: int
    frame: Frame
    airtime_s: float

    @property
    def end(self) -> float:
        return self.time + self.airtime_s


class Listener(Protocol):
    """What a MAC offers the medium (:class:`dticn.phy.medium.Listener`)."""

    def listening(self, channel: int, sf: int, start: float) -> bool: ...
    def preamble(self, tx: Transmission) -> None: ...
    def deliver(self, tx: Transmission, rssi_dbm: float, margin_db: float) -> None: ...


@dataclass
class FakeMedium:
    """The air around one MAC, played by the test (see module docstring)."""

    clock: EventKernel
    sf: int = 7
    mac: Listener | None = None
    #: ``(time, state entered, channel)``; the channel is given for RX and TX, else None.
    log: list[tuple[float, RadioState, int | None]] = field(default_factory=list)
    sent: list[Sent] = field(default_factory=list)
    busy_channels: set[int] = field(default_factory=set)
    heard: list[Transmission] = field(default_factory=list)
    unheard: list[Transmission] = field(default_factory=list)

    # -- the radio's side (its energy meter, and the medium's calls) -------------------------
    def transition(self, state: RadioState, now: float, tx_power_dbm: float | None = None
                   ) -> None:
        self.log.append((now, state, None))

    def _channel_of_last(self, state: RadioState, channel: int) -> None:
        if self.log and self.log[-1][1] is state:
            self.log[-1] = (self.log[-1][0], state, channel)

    def rx_started(self, address: int, channel: int) -> None:
        self._channel_of_last(RadioState.RX, channel)

    def rx_stopped(self, address: int, channel: int) -> None:
        return None

    def transmit(self, sender: int, dst: int, channel: int, sf: int, power_dbm: float,
                 frame: Any, airtime_s: float) -> Transmission:
        self._channel_of_last(RadioState.TX, channel)
        now = self.clock.now()
        self.sent.append(Sent(now, channel, dst, frame, airtime_s))
        return Transmission(sender, dst, channel, sf, power_dbm, now, now + airtime_s, frame)

    def channel_active(self, observer: int, channel: int, sf: int, start: float, end: float
                       ) -> bool:
        return channel in self.busy_channels

    # -- the test's side -----------------------------------------------------------------------
    def send(self, frame: Frame, *, at: float, airtime_s: float, channel: int
             ) -> Transmission:
        """Put ``frame`` on air from ``at`` for ``airtime_s``; the MAC hears it if it listens
        on ``channel`` from its start to its end (the medium's rule)."""
        tx = Transmission(frame.src, frame.dst, channel, self.sf, TX_POWER_DBM, at,
                          at + airtime_s, frame)
        self.clock.call_at(at, self._start, tx)
        self.clock.call_at(tx.end, self._end, tx, priority=END_OF_FRAME_PRIORITY)
        return tx

    def _start(self, tx: Transmission) -> None:
        assert self.mac is not None, "attach the MAC first (FakeMedium.mac = ...)"
        if self.mac.listening(tx.channel, tx.sf, tx.start):
            self.mac.preamble(tx)

    def _end(self, tx: Transmission) -> None:
        assert self.mac is not None
        if self.mac.listening(tx.channel, tx.sf, tx.start):
            self.heard.append(tx)
            self.mac.deliver(tx, -90.0, 30.0)
        else:
            self.unheard.append(tx)

    def run_until_sent(self, count: int) -> Sent:
        """Run the clock until the MAC has sent ``count`` frames; the last of them."""
        while len(self.sent) < count:
            assert self.clock.step(), f"the clock ran out after {len(self.sent)} frames"
        return self.sent[count - 1]

    def states_between(self, start: float, end: float
                       ) -> list[tuple[float, RadioState, int | None]]:
        """The log entries in ``[start, end]``."""
        return [e for e in self.log if start <= e[0] <= end]


class EventLog(list[MacEvent]):
    """An observer keeping every :class:`MacEvent` (``mac.observers.append(log)``)."""

    def __call__(self, event: MacEvent) -> None:
        self.append(event)

    def of(self, kind: str) -> list[MacEvent]:
        return [e for e in self if e.kind == kind]


def fake_platform(medium: FakeMedium, address: int, *, seed: int = 1, gateway: bool = False,
                  enforce_duty_cycle: bool = True) -> Platform:
    """A :class:`Platform` on ``medium.clock`` whose radio goes through ``medium``: a node's
    :class:`SimRadio` (its states logged) or, with ``gateway``, a
    :class:`CoordinatorRadio` and the gateway's one-hour duty-cycle rule."""
    clock = medium.clock
    radio: SimRadio | CoordinatorRadio
    if gateway:
        radio = CoordinatorRadio(address, clock, medium, medium.sf,  # type: ignore[arg-type]
                                 TX_POWER_DBM)
    else:
        radio = SimRadio(address, clock, medium, medium.sf, TX_POWER_DBM,  # type: ignore[arg-type]
                         medium)
    duty = DutyCycleTracker(ChannelPlan.from_config(), enforce=enforce_duty_cycle,
                            rule="window" if gateway else "off-time")
    return Platform(clock, random.Random(seed), radio, LoRaParams(sf=medium.sf), duty)
