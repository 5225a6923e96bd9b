"""The shared radio medium (event-by-event path).

:class:`Medium` knows every frame on air; when one ends it decides, per intended
receiver, whether the receiver was listening on that channel and SF for the whole frame,
whether the signal was above sensitivity, and whether it survived the overlapping frames
on the same channel (:class:`~dticn.phy.interference.InterferenceModel`). Frames on other
channels never interact. Receivers are :class:`Listener` objects, so a MAC may listen
through a live :class:`~dticn.phy.radio.SimRadio` or, for a mains-powered coordinator whose
energy is not modelled, through its schedule.

Frames are opaque here: the medium carries whatever object the MAC hands its radio and
reads only the destination address given beside it (:data:`BROADCAST`: every radio in RX
on the channel).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from dticn.phy.collision import CollisionRule, Overlap
from dticn.phy.interference import InterferenceModel
from dticn.sim.kernel import EventKernel

BROADCAST = 0xFFFF
"""Destination address of a frame for every listener (IEEE 802.15.4 broadcast)."""

#: What :meth:`Medium.channel_active` senses. ``ideal``: every audible same-SF frame
#: overlapping the window. ``inet``: as DSME-LoRa's simulation (inetrg/dsme_lora e94c7e5 on
#: inetrg/inet 6498d24): its CCA reads the radio's reception state, and INET's Radio starts
#: tracking a frame only if the radio was in receiver mode as it began (Radio.cc
#: startReception, line 420); their platform puts the radio back in receiver mode as each
#: transmission ends (DSMEPlatform.cc receiveSignal and the "receive" message), so a frame
#: that began while the sensing node transmitted stays unseen by its later CCAs.
CAD_RULES = ("ideal", "inet")

#: Priority of end-of-frame events: before any MAC timer due at the same instant.
END_OF_FRAME_PRIORITY = -10


@dataclass(eq=False)
class Transmission:
    """One frame on air; ``frame`` is the MAC's, opaque to the medium."""

    sender: int
    dst: int
    channel: int
    sf: int
    power_dbm: float
    start: float
    end: float
    frame: Any
    #: Under ``cad_rule="inet"``: the radios transmitting as it began (deaf to it).
    deaf: frozenset[int] = frozenset()


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
                 max_airtime_s: float = 10.0, collision: CollisionRule | None = None,
                 cad_rule: str = "ideal") -> None:
        if fading_sigma_db and rng is None:
            raise ValueError("fading needs an rng: pass the scenario's numpy Generator")
        self.kernel = kernel
        self.interference = interference
        #: Another collision rule (dticn.phy.collision, e.g. FLoRa's); None: ``interference``.
        self.collision = collision
        #: What a CAD senses (:data:`CAD_RULES`).
        self.cad_rule = "ideal"
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
        # Told (what, transmission, receiver): "transmit" as a frame goes on air (receiver:
        # its destination), "below_sensitivity" and "collision" where it is lost.
        self.observers: list[Callable[[str, Transmission, int], None]] = []
        self.set_cad_rule(cad_rule)

    def set_cad_rule(self, rule: str) -> None:
        """Choose what a CAD senses (:data:`CAD_RULES`); before the first frame, since
        ``inet`` needs who listened as each frame began."""
        if rule not in CAD_RULES:
            raise ValueError(f"cad_rule={rule!r}: use one of {', '.join(CAD_RULES)}")
        if rule != self.cad_rule and self.stats.frames:
            raise ValueError("cad_rule: choose it before the first frame goes on air")
        self.cad_rule = rule

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

    def _receivers(self, dst: int, sender: int, channel: int) -> list[tuple[int, Listener]]:
        if dst == BROADCAST:
            out = [(a, lst) for a, lst in self._always.items() if a != sender]
            out += [(a, self._listeners[a]) for a in sorted(self._rx_on.get(channel, ()))
                    if a != sender and a not in self._always]
            return out
        listener = self._listeners.get(dst)
        return [(dst, listener)] if listener is not None else []

    def transmit(self, sender: int, dst: int, channel: int, sf: int, power_dbm: float,
                 frame: Any, airtime_s: float) -> Transmission:
        """Put ``frame`` (for ``dst``) on air now for ``airtime_s``; its fate is decided when
        it ends."""
        now = self.kernel.now()
        tx = Transmission(sender, dst, channel, sf, power_dbm, now, now + airtime_s, frame)
        if self.cad_rule == "inet":
            tx.deaf = self._transmitting(now)
        on_air = self._on_air.setdefault(channel, [])
        horizon = now - self._max_airtime
        if on_air and on_air[0].end < horizon:
            on_air[:] = [o for o in on_air if o.end >= horizon]
        on_air.append(tx)
        self.stats.frames += 1
        self._notify("transmit", tx, dst)
        for _, listener in self._receivers(dst, sender, channel):
            if listener.listening(channel, sf, now):
                listener.preamble(tx)
        self.kernel.call_at(tx.end, self._finish, tx, priority=END_OF_FRAME_PRIORITY)
        return tx

    def channel_active(self, observer: int, channel: int, sf: int, start: float, end: float
                       ) -> bool:
        """CAD: a same-SF frame on ``channel`` overlapping [start, end], audible at ``observer``
        (under ``cad_rule="inet"`` not one that began while ``observer`` transmitted)."""
        inet = self.cad_rule == "inet"
        for o in self._on_air.get(channel, ()):
            if o.sf == sf and o.sender != observer and o.start < end and o.end > start:
                if inet and observer in o.deaf:
                    continue
                loss = self.link_loss_db(o.sender, observer)
                if o.power_dbm - loss >= self.sensitivity_dbm(o.sf):
                    return True
        return False

    def _transmitting(self, now: float) -> frozenset[int]:
        """Radios with a frame on air now, on any channel (half duplex: deaf meanwhile)."""
        return frozenset(o.sender for frames in self._on_air.values() for o in frames
                         if o.start <= now < o.end)

    def _finish(self, tx: Transmission) -> None:
        overlapping = [o for o in self._on_air.get(tx.channel, ())
                       if o is not tx and o.start < tx.end and o.end > tx.start]
        for address, listener in self._receivers(tx.dst, tx.sender, tx.channel):
            if not listener.listening(tx.channel, tx.sf, tx.start):
                self.stats.not_listening += 1
                continue
            rssi = self.rssi_dbm(tx.sender, address, tx.power_dbm)
            margin = rssi - self.sensitivity_dbm(tx.sf)
            if margin < 0:
                self.stats.below_sensitivity += 1
                self._notify("below_sensitivity", tx, address)
                continue
            if self.collision is None:
                interferers = [(o.sf, self.rssi_dbm(o.sender, address, o.power_dbm))
                               for o in overlapping if o.sender != address]
                lost = bool(interferers) and not self.interference.survives(
                    tx.sf, rssi, interferers)
            else:
                overlaps = [Overlap(o.sf, o.start, o.end,
                                    self.rssi_dbm(o.sender, address, o.power_dbm))
                            for o in overlapping if o.sender != address]
                lost = bool(overlaps) and not self.collision.survives(
                    tx.sf, tx.start, rssi, overlaps, end=tx.end)
            if lost:
                self.stats.collisions += 1
                self._notify("collision", tx, address)
                continue
            self.stats.delivered += 1
            listener.deliver(tx, rssi, margin)

    def _notify(self, what: str, tx: Transmission, receiver: int) -> None:
        for observer in self.observers:
            observer(what, tx, receiver)
