"""LoRaWAN class B, both ends (LoRaWAN 1.0.3 sections 12-15; settings in the TOML's
``[class_b]``): the ping-slot and beacon timing both ends compute, the beacon, the network
server's ping slots and beacons (:class:`ClassBGateway`) and the device that listens in
them (:class:`ClassBDevice`).

The beacon goes out every ``beacon_period_s`` at multiples of it (GPS time). A device opens
one ping slot per ping period at the times :func:`ping_slot_times` gives, which the network
server computes too: it sends a queued downlink in the device's next ping slot where its
transmitter and the ping channel's duty cycle allow (unconfirmed, no FPending: the next
slot carries the next frame), besides the class A windows. No uplink starts in the beacon
guard (3 s before a beacon) nor the beacon-reserved time (2.12 s after it, section 15.2).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Any

from dticn.mac.lorawan.class_a import ClassADevice
from dticn.mac.lorawan.messages import Downlink
from dticn.mac.lorawan.network_server import LorawanGateway
from dticn.mac.lorawan_config import LorawanConfig
from dticn.phy.airtime import LoRaParams, time_on_air
from dticn.phy.medium import BROADCAST, Transmission
from dticn.phy.radio_states import RadioState

#: Class B timing (LoRaWAN 1.0.3 sections 13.2 and 15.2): ping slots are 30 ms long and
#: start after the 2.12 s beacon-reserved time; no uplink in the 3 s before a beacon.
PING_SLOT_S = 0.030
BEACON_RESERVED_S = 2.12
BEACON_GUARD_S = 3.0
#: A class B device opens its ping window this long before the slot starts (the medium
#: hands a frame only to a receiver that listened as it began).
PING_LEAD_S = 1e-3


# -- timing both ends compute ---------------------------------------------------------
def ping_slot_times(cfg: LorawanConfig, beacon_time: float, address: int) -> list[float]:
    """Start times of device ``address``'s ping slots in the beacon period that begins at
    ``beacon_time`` (LoRaWAN 1.0.3 section 13.2): ``pingOffset`` drawn from the beacon time
    and the address, then one slot every ``pingPeriod`` slots of 30 ms after the
    beacon-reserved time. Device and network server compute the same times. The spec's
    draw is AES-128 (key 0) over beaconTime | DevAddr; any hash both ends share plays that
    role in a simulation, here BLAKE2b."""
    period_slots = round(cfg.ping_period_s() / PING_SLOT_S)
    window_slots = round((cfg.beacon_period_s - BEACON_RESERVED_S - BEACON_GUARD_S)
                         / PING_SLOT_S)
    digest = hashlib.blake2b(f"{beacon_time:.3f}/{address}".encode(), digest_size=2).digest()
    offset = int.from_bytes(digest, "little") % period_slots
    return [beacon_time + BEACON_RESERVED_S + (offset + k * period_slots) * PING_SLOT_S
            for k in range(max(window_slots // period_slots, 1))]


def class_b_uplink_start(cfg: LorawanConfig, now: float) -> float:
    """When a class B device may start an uplink at or after ``now``: not in the 3 s beacon
    guard before a beacon nor the 2.12 s beacon-reserved time after it (section 15.2)."""
    period = cfg.beacon_period_s
    next_beacon = (now // period + 1) * period
    last_beacon = next_beacon - period
    if last_beacon > 0 and now < last_beacon + BEACON_RESERVED_S:
        return last_beacon + BEACON_RESERVED_S
    if now > next_beacon - BEACON_GUARD_S:
        return next_beacon + BEACON_RESERVED_S
    return now


def next_ping_slot(cfg: LorawanConfig, address: int, after: float) -> float:
    """Start of ``address``'s first ping slot after ``after`` (from the next beacon on when
    the current period has none left; no slot before the first beacon)."""
    period = cfg.beacon_period_s
    beacon = max(math.floor(after / period), 1) * period
    while True:
        for start in ping_slot_times(cfg, beacon, address):
            if start > after:
                return start
        beacon += period


@dataclass(eq=False)
class Beacon:
    """A class B beacon (its time is all a device needs here)."""

    time: float


@dataclass
class ClassBCounters:
    """What the class B part of a device did."""

    beacons_received: int = 0
    beacons_lost: int = 0
    ping_slots_opened: int = 0
    windows_skipped: int = 0


# -- network side ---------------------------------------------------------------------
class ClassBGateway(LorawanGateway):
    """A gateway that also sends beacons (:meth:`start_beacons`) and sends the queued
    downlinks of its class B devices (``class_b``) in their ping slots."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: Class B devices: their queued downlinks also go out in their ping slots.
        self.class_b: set[int] = set()
        self._ping_planned: set[int] = set()

    def start_beacons(self) -> None:
        """A beacon every ``beacon_period_s`` from the first period on (10 symbol
        preamble, no CRC, as LoRaWAN 1.0.3 section 15.2 sends it)."""
        params = LoRaParams(sf=self.cfg.beacon_sf, bw_hz=self.phy.bw_hz, cr=self.phy.cr,
                            preamble=10, crc=False, explicit_header=False)
        self.beacon_toa_s = time_on_air(params, self.cfg.beacon_bytes)
        self.kernel.call_at(self.cfg.beacon_period_s, self._beacon)

    def _beacon(self) -> None:
        now = self.kernel.now()
        self.kernel.call_at(now + self.cfg.beacon_period_s, self._beacon)
        if not self._no_downlink_during(now, now + self.beacon_toa_s):
            return
        self.duty.record(self.rx2_channel, now, self.beacon_toa_s)
        self.beacons_sent += 1
        self._put_on_air(self.rx2_channel, self.cfg.beacon_sf, BROADCAST, Beacon(now),
                         self.beacon_toa_s)

    def _free(self, start: float, end: float) -> bool:
        """The transmitter is free over [start, end]: no downlink, no beacon."""
        if self.beacon_toa_s:      # beacons started: keep every beacon's airtime free
            period = self.cfg.beacon_period_s
            k = (end // period) * period
            if 0 < k < end and k + self.beacon_toa_s > start:
                return False
        return super()._free(start, end)

    def _queued(self, dest: int) -> None:
        if dest in self.class_b:
            self._plan_ping(dest)

    def _ping_toa(self, payload_bytes: int) -> float:
        return self.downlink_airtime(payload_bytes, self.cfg.ping_sf)

    def _plan_ping(self, dest: int) -> None:
        """Reserve the first of ``dest``'s ping slots (within two beacon periods) where the
        transmitter is free and the ping channel's duty cycle allows the head of its queue;
        a head over the ping data rate's payload limit waits for a class A window."""
        queue = self.downlink_queues.get(dest)
        if dest in self._ping_planned or not queue:
            return
        size = len(queue[0].payload)
        if size > self.cfg.max_payload(self.cfg.ping_sf):
            self.counters.downlinks_too_large_for_ping += 1
            return
        toa = self._ping_toa(size)
        now = self.kernel.now()
        start = now
        while start < now + 2 * self.cfg.beacon_period_s:
            start = next_ping_slot(self.cfg, dest, start)
            if self._free(start, start + toa) and self.duty.allowed(self.rx2_channel, start):
                self._downlinks.append((start, start + toa))
                self._ping_planned.add(dest)
                self.kernel.call_at(start, self._send_ping, dest, toa)
                return
        self.counters.downlinks_deferred += 1

    def _send_ping(self, dest: int, reserved_toa: float) -> None:
        """The reserved ping slot: the head of the queue if it still fits the reservation
        (a class A window may have taken the planned frame), then plan the next."""
        self._ping_planned.discard(dest)
        queue = self.downlink_queues.get(dest)
        if queue and self._ping_toa(len(queue[0].payload)) <= reserved_toa + 1e-9 and \
                self.duty.allowed(self.rx2_channel, self.kernel.now()):
            head = queue.popleft()
            self.duty.record(self.rx2_channel, self.kernel.now(), reserved_toa)
            self.counters.downlinks_ping += 1
            self._send_downlink(self.rx2_channel, self.cfg.ping_sf,
                                Downlink(dest, None, head.payload), reserved_toa, head)
        self._plan_ping(dest)


# -- device side ----------------------------------------------------------------------
class ClassBDevice(ClassADevice):
    """A class A device that also listens for every beacon and opens one ping slot per
    ping period (module docstring).

    The device opens its receiver ``lead`` before each beacon for the beacon's time on air
    plus a guard, at the beacon SF on the beacon channel, and each ping slot for the window
    timeout at the ping SF (both through the class A windows' receiver,
    :class:`~dticn.mac.lorawan.rx_window.ReceiveWindow`). A class B window is skipped
    (counted) when an uplink transaction holds the radio, and an uplink waits for an open
    class B window to close and for the beacon guard and beacon-reserved time to pass.
    """

    BEACON_GUARD_S = BEACON_GUARD_S
    BEACON_RESERVED_S = BEACON_RESERVED_S

    def __init__(self, *args: Any, beacon_channel: int, beacon_toa_s: float,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.b = ClassBCounters()
        self.beacon_channel = beacon_channel
        self.beacon_toa_s = beacon_toa_s
        self._b_got_beacon = False
        cfg = self.cfg
        self._ping_window_s = cfg.rx_window_s(cfg.ping_sf, self.phy.bw_hz)
        self._beacon_window_s = beacon_toa_s + 2 * cfg.max_rx_error_s

    def start(self) -> None:
        """Schedule the class B windows from the first beacon on (and the keep-alive)."""
        super().start()
        self.kernel.call_at(self.cfg.beacon_period_s - self._b_lead(), self._beacon_window)

    def _b_lead(self) -> float:
        return self.cfg.max_rx_error_s + 1e-3

    def _radio_busy_until(self, now: float) -> float:
        return max(class_b_uplink_start(self.cfg, now), self.rx_window.open_until)

    def _free_for_class_b(self) -> bool:
        return self._current is None and self.radio.state is RadioState.SLEEP

    def _beacon_window(self) -> None:
        now = self.kernel.now()
        beacon_at = now + self._b_lead()
        self.kernel.call_at(beacon_at + self.cfg.beacon_period_s - self._b_lead(),
                            self._beacon_window)
        # a missed beacon keeps the device's clock (class B survives beacon-less periods,
        # section 12.1): the period's ping slots are kept either way
        if not self._free_for_class_b():
            self.b.windows_skipped += 1
        else:
            self._b_got_beacon = False
            self.rx_window.open(self.beacon_channel, self.cfg.beacon_sf,
                                self._b_lead() + self._beacon_window_s, self._beacon_closed)
        for start in ping_slot_times(self.cfg, beacon_at, self.address):
            self.kernel.call_at(start - PING_LEAD_S, self._ping_slot)

    def _ping_slot(self) -> None:
        if not self._free_for_class_b():
            self.b.windows_skipped += 1
            return
        self.b.ping_slots_opened += 1
        self.rx_window.open(self.beacon_channel, self.cfg.ping_sf, self._ping_window_s,
                            self._class_b_closed)

    def _class_b_closed(self, listened_s: float) -> None:
        self.counters.rx_window_s += listened_s

    def _beacon_closed(self, listened_s: float) -> None:
        self._class_b_closed(listened_s)
        if self._b_got_beacon:
            self.b.beacons_received += 1
        else:
            self.b.beacons_lost += 1

    def _on_frame(self, tx: Transmission, rssi_dbm: float, margin_db: float) -> None:
        if isinstance(tx.frame, Beacon):
            self._b_got_beacon = True
            return
        super()._on_frame(tx, rssi_dbm, margin_db)
