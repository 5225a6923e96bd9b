"""LoRaWAN class A on the simulated LoRa PHY: an end device and a gateway with its network
server (LoRaWAN 1.0.3 sections 3.3, 4 and 18; EU868 settings in ``lorawan_eu868.toml``).

The device sends each item as soon as it can (unslotted ALOHA): on a channel drawn at
random among the uplink channels whose sub-band's duty cycle allows it now, else at the
earliest time one does. After every uplink it sleeps, opens RX1 ``receive_delay1`` after
the uplink's end on the same channel and SF, and, when nothing came, RX2
``receive_delay2`` after it on 869.525 MHz at SF12. A window stays open for LoRaMac-node's
timeout, or to the end of a frame whose preamble it caught. A confirmed uplink without an
ACK in either window is sent again after the retransmission timeout (2 +- 1 s), up to
``max_transmissions`` times; an unconfirmed one is sent once.

The gateway hears up to ``demodulators`` frames at once on any uplink channel and SF, and
nothing while it transmits (half duplex). Its network server answers a confirmed uplink
with an ACK in RX1 when the sub-band's hourly duty cycle and its own transmitter allow,
else in RX2, else not at all; each case is counted.

Every radio state change goes through :class:`~dticn.phy.radio.SimRadio`, so the energy
meter sees the time really spent; the device also counts its uplinks, their time on air,
and its time listening and waiting in the windows for the per-event energy profiles.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dticn.mac.lorawan_config import LorawanConfig
from dticn.phy.airtime import LoRaParams, time_on_air
from dticn.phy.dutycycle import DutyCycleTracker
from dticn.phy.medium import BROADCAST, Transmission
from dticn.phy.radio import CoordinatorRadio, SimRadio
from dticn.phy.radio_states import RadioState
from dticn.sim.kernel import EventKernel

#: After the frame-end events of the medium (priority -10), before ordinary timers.
_RELEASE_PRIORITY = -5


@dataclass(eq=False)
class Uplink:
    """A data frame on air: who, which frame counter, whether it asks for an ACK."""

    src: int
    fcnt: int
    payload: bytes
    confirmed: bool
    attempt: int
    generated_at: float


@dataclass(eq=False)
class Downlink:
    """A frame from the network server to one device (an ACK here)."""

    dst: int
    ack_fcnt: int | None
    payload: bytes = b""


@dataclass
class DeviceCounters:
    """What one class A device did (frames, failures, and where its awake time went)."""

    uplinks: int = 0
    retransmissions: int = 0
    acked: int = 0
    failed: int = 0
    queue_drops: int = 0
    downlinks: int = 0
    uplink_tx_s: float = 0.0
    rx_window_s: float = 0.0
    rx_wait_s: float = 0.0
    duty_deferrals: int = 0


@dataclass
class GatewayCounters:
    """What the gateway heard and answered."""

    received: int = 0
    duplicates: int = 0
    lost_half_duplex: int = 0
    lost_no_demodulator: int = 0
    acks_rx1: int = 0
    acks_rx2: int = 0
    acks_dropped: int = 0
    downlink_airtime_s: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))


class ClassADevice:
    """One LoRaWAN class A end device (module docstring)."""

    def __init__(self, address: int, gateway: int, kernel: EventKernel, radio: SimRadio,
                 duty: DutyCycleTracker, config: LorawanConfig, phy: LoRaParams,
                 uplink_channels: int, rx2_channel: int, rng: random.Random, *,
                 confirmed: bool = False) -> None:
        self.address = address
        self.gateway = gateway
        self.kernel = kernel
        self.radio = radio
        self.duty = duty
        self.cfg = config
        self.phy = phy
        self.uplink_channels = uplink_channels
        self.rx2_channel = rx2_channel
        self.rng = rng
        self.confirmed = confirmed
        self.queue: deque[tuple[bytes, float]] = deque()
        self.counters = DeviceCounters()
        self._fcnt = 0
        self._current: Uplink | None = None
        self._pending_start = False
        self._tx_end = 0.0
        self._window_opened = 0.0
        self._window_rx_s = 0.0
        self._got_downlink = False
        self._acked = False
        self._rx1_s = config.rx_window_s(phy.sf, phy.bw_hz)
        self._rx2_s = config.rx_window_s(config.rx2_sf, phy.bw_hz)
        self._rx2_sf = config.rx2_sf
        self.radio.on_frame = self._on_frame
        #: Told ("tx", uplink), ("delivered"/"failed", uplink) and ("drop", None).
        self.observers: list[Callable[[str, Uplink | None], None]] = []

    # -- sending ----------------------------------------------------------------------
    def send(self, payload: bytes) -> bool:
        """Queue an item; False (and counted) when the queue is full."""
        if len(self.queue) >= self.cfg.queue_limit:
            self.counters.queue_drops += 1
            self._notify("drop", None)
            return False
        self.queue.append((payload, self.kernel.now()))
        if self._current is None and not self._pending_start:
            self._start_next()
        return True

    def _start_next(self) -> None:
        self._pending_start = False
        if self._current is not None or not self.queue:
            return
        payload, generated = self.queue.popleft()
        self._fcnt += 1
        self._current = Uplink(self.address, self._fcnt, payload, self.confirmed, 1, generated)
        self._transmit()

    def _transmit(self) -> None:
        """Send the current uplink now on an allowed channel, or wait for one."""
        up = self._current
        assert up is not None
        now = self.kernel.now()
        wait = self._radio_busy_until(now)
        if wait > now:
            self.kernel.call_at(wait, self._transmit)
            return
        allowed = [ch for ch in range(self.uplink_channels) if self.duty.allowed(ch, now)]
        if not allowed:
            self.counters.duty_deferrals += 1
            when = min(self.duty.earliest(ch, now) for ch in range(self.uplink_channels))
            self.kernel.call_at(when, self._transmit)
            return
        channel = self.rng.choice(allowed)
        toa = time_on_air(self.phy, len(up.payload) + self.cfg.frame_overhead_bytes)
        self.radio.sf = self.phy.sf
        self.radio.wake()
        self.radio.transmit(channel, self.gateway, up, toa,
                            lambda: self._tx_done(channel))
        self.duty.record(channel, now, toa)
        self.counters.uplinks += 1
        self.counters.uplink_tx_s += toa
        if up.attempt > 1:
            self.counters.retransmissions += 1
        self._notify("tx", up)

    def _radio_busy_until(self, now: float) -> float:
        """When the radio is free for an uplink (now: class A never holds it elsewhere)."""
        return now

    def _tx_done(self, channel: int) -> None:
        self.radio.idle()
        self.radio.sleep()
        now = self.kernel.now()
        self._tx_end = now
        self._window_rx_s = 0.0
        self._got_downlink = False
        self._acked = False
        lead = self._lead_s(self.phy.sf, self._rx1_s)
        self.kernel.call_at(now + self.cfg.receive_delay1_s - lead, self._open_window,
                            channel, self.phy.sf, self._rx1_s, 1)

    def _lead_s(self, sf: int, window_s: float) -> float:
        """How long before the expected downlink a window opens: LoRaMac-node centres the
        window on the preamble (offset 4 T_sym - window / 2); at least 1 ms early, since the
        medium hands a frame only to a receiver that listened as it began."""
        symbol_s = (1 << sf) / self.phy.bw_hz
        return max(window_s / 2 - 4 * symbol_s, 0.0) + 1e-3

    # -- receive windows ---------------------------------------------------------------
    def _open_window(self, channel: int, sf: int, window_s: float, which: int) -> None:
        self.radio.sf = sf
        self.radio.wake()
        self.radio.start_rx(channel)
        self._window_opened = self.kernel.now()
        self.kernel.call_later(window_s, self._close_window, which)

    def _close_window(self, which: int) -> None:
        if self.radio.receiving():     # a preamble was caught: stay for the whole frame
            self.kernel.call_at(self.radio.receiving_until, self._close_window, which,
                                priority=_RELEASE_PRIORITY)
            return
        self.radio.idle()
        self.radio.sleep()
        now = self.kernel.now()
        self._window_rx_s += now - self._window_opened
        self.radio.sf = self.phy.sf
        if which == 1 and not self._got_downlink:
            lead = self._lead_s(self._rx2_sf, self._rx2_s)
            self.kernel.call_at(self._tx_end + self.cfg.receive_delay2_s - lead,
                                self._open_window, self.rx2_channel, self._rx2_sf,
                                self._rx2_s, 2)
            return
        self._end_attempt(now)

    def _on_frame(self, tx: Transmission, rssi_dbm: float, margin_db: float) -> None:
        frame = tx.frame
        if not isinstance(frame, Downlink) or frame.dst != self.address:
            return
        self._got_downlink = True
        self.counters.downlinks += 1
        if self._current is not None and frame.ack_fcnt == self._current.fcnt:
            self._acked = True

    def _end_attempt(self, now: float) -> None:
        up = self._current
        assert up is not None
        c = self.counters
        c.rx_window_s += self._window_rx_s
        c.rx_wait_s += (now - self._tx_end) - self._window_rx_s
        if up.confirmed and not self._acked:
            if up.attempt < self.cfg.max_transmissions:
                up.attempt += 1
                timeout = self.cfg.retransmit_timeout_s + self.rng.uniform(
                    -self.cfg.retransmit_timeout_rnd_s, self.cfg.retransmit_timeout_rnd_s)
                self.kernel.call_later(timeout, self._transmit)
                return
            c.failed += 1
            self._notify("failed", up)
        elif up.confirmed:
            c.acked += 1
            self._notify("delivered", up)
        self._current = None
        self._pending_start = True
        self.kernel.call_later(0.0, self._start_next)

    def _notify(self, what: str, up: Uplink | None) -> None:
        for observer in self.observers:
            observer(what, up)

    @property
    def pending(self) -> int:
        """Items not yet finished (queued or on their way)."""
        return len(self.queue) + int(self._current is not None)


@dataclass
class _Reception:
    tx: Transmission
    lost_half_duplex: bool = False


class LorawanGateway:
    """The gateway and its network server (module docstring); the medium's listener."""

    def __init__(self, address: int, kernel: EventKernel, radio: CoordinatorRadio,
                 duty: DutyCycleTracker, config: LorawanConfig, phy: LoRaParams,
                 uplink_channels: int, rx2_channel: int) -> None:
        self.address = address
        self.kernel = kernel
        self.radio = radio
        self.duty = duty
        self.cfg = config
        self.phy = phy
        self.uplink_channels = uplink_channels
        self.rx2_channel = rx2_channel
        self.counters = GatewayCounters()
        self._locked: dict[tuple[int, int, float], _Reception] = {}
        self._downlinks: list[tuple[float, float]] = []     # scheduled (start, end)
        self._seen: dict[int, int] = {}                     # device -> last FCnt delivered
        #: Called once per new uplink (duplicates of a retransmission are not): the
        #: uplink and the time it was received.
        self.on_uplink: Callable[[Uplink, float], None] | None = None
        self._ack_params = {sf: LoRaParams(sf=sf, bw_hz=phy.bw_hz, cr=phy.cr,
                                           preamble=phy.preamble, crc=False)
                            for sf in range(7, 13)}
        self.beacon_toa_s = 0.0
        self.beacons_sent = 0

    def start_beacons(self) -> None:
        """Class B: a beacon every ``beacon_period_s`` from the first period on (10 symbol
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
        self._send_downlink(self.rx2_channel, self.cfg.beacon_sf, Beacon(now),
                            self.beacon_toa_s)

    # -- Listener protocol -----------------------------------------------------------
    def listening(self, channel: int, sf: int, start: float) -> bool:
        key = (channel, sf, start)
        reception = self._locked.get(key)
        if reception is not None:          # asked again as the frame ends
            if reception.lost_half_duplex:   # set by _send_downlink as it began to send
                self.counters.lost_half_duplex += 1
                return False
            return True
        if channel >= self.uplink_channels:
            return False
        if self.radio.transmitting_during(start, start + 1e-9):
            self.counters.lost_half_duplex += 1
            return False
        if len(self._locked) >= self.cfg.demodulators:
            self.counters.lost_no_demodulator += 1
            return False
        return True

    def preamble(self, tx: Transmission) -> None:
        key = (tx.channel, tx.sf, tx.start)
        self._locked[key] = _Reception(tx)
        self.kernel.call_at(tx.end, self._locked.pop, key, None, priority=_RELEASE_PRIORITY)

    def deliver(self, tx: Transmission, rssi_dbm: float, margin_db: float) -> None:
        up = tx.frame
        if not isinstance(up, Uplink):
            return
        self.counters.received += 1
        if self._seen.get(up.src, 0) >= up.fcnt:
            self.counters.duplicates += 1
        else:
            self._seen[up.src] = up.fcnt
            if self.on_uplink is not None:
                self.on_uplink(up, tx.end)
        if up.confirmed:
            self._answer(up, tx)

    # -- downlinks ---------------------------------------------------------------------
    def _answer(self, up: Uplink, tx: Transmission) -> None:
        """ACK in RX1, else RX2, else not at all (counted)."""
        frame = Downlink(up.src, up.fcnt)
        windows = ((tx.end + self.cfg.receive_delay1_s, tx.channel, tx.sf, "rx1"),
                   (tx.end + self.cfg.receive_delay2_s, self.rx2_channel, self.cfg.rx2_sf,
                    "rx2"))
        for start, channel, sf, which in windows:
            toa = time_on_air(self._ack_params[sf], self.cfg.ack_bytes)
            if not self._free(start, start + toa):
                continue
            if not self.duty.allowed(channel, start):
                continue
            self._downlinks.append((start, start + toa))
            self.duty.record(channel, start, toa)
            self.kernel.call_at(start, self._send_downlink, channel, sf, frame, toa)
            if which == "rx1":
                self.counters.acks_rx1 += 1
            else:
                self.counters.acks_rx2 += 1
            return
        self.counters.acks_dropped += 1

    def _free(self, start: float, end: float) -> bool:
        """The transmitter is free over [start, end]: no downlink, no class B beacon."""
        if self.beacon_toa_s:      # class B: keep every beacon's airtime free
            period = self.cfg.beacon_period_s
            k = (end // period) * period
            if 0 < k < end and k + self.beacon_toa_s > start:
                return False
        return self._no_downlink_during(start, end)

    def _no_downlink_during(self, start: float, end: float) -> bool:
        now = self.kernel.now()
        self._downlinks = [(s, e) for s, e in self._downlinks if e > now]
        return all(e <= start or s >= end for s, e in self._downlinks)

    def _send_downlink(self, channel: int, sf: int, frame: Downlink | Beacon,
                       toa: float) -> None:
        self.radio.sf = sf
        dst = frame.dst if isinstance(frame, Downlink) else BROADCAST
        self.radio.transmit(channel, dst, frame, toa, lambda: None)
        self.radio.sf = self.phy.sf
        self.counters.downlink_airtime_s += toa
        for reception in self._locked.values():   # frames being received are lost now
            reception.lost_half_duplex = True



@dataclass
class ClassBCounters:
    """What the class B part of a device did."""

    beacons_received: int = 0
    beacons_lost: int = 0
    ping_slots_opened: int = 0
    windows_skipped: int = 0


@dataclass(eq=False)
class Beacon:
    """A class B beacon (its time is all a device needs here)."""

    time: float


class ClassBDevice(ClassADevice):
    """A class A device that also listens for every beacon and opens one ping slot per
    ping period (LoRaWAN 1.0.3 sections 13-15; settings in the TOML's ``[class_b]``).

    The beacon goes out every ``beacon_period_s`` at multiples of it (GPS time); the device
    opens its receiver ``lead`` before it for the beacon's time on air plus a guard, at the
    beacon SF on the beacon channel. A ping slot opens for the window timeout at the ping
    SF, at a per-period offset drawn from the device's generator (the spec draws it from
    an AES hash of the beacon time and DevAddr). A class B window is skipped (counted) when
    an uplink transaction holds the radio, and an uplink waits for an open class B window
    to close; no uplink starts in the beacon guard (3 s before a beacon, section 15.2) or
    the beacon-reserved time (2.12 s after it).
    """

    BEACON_GUARD_S = 3.0
    BEACON_RESERVED_S = 2.12

    def __init__(self, *args: Any, beacon_channel: int, beacon_toa_s: float,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.b = ClassBCounters()
        self.beacon_channel = beacon_channel
        self.beacon_toa_s = beacon_toa_s
        self._b_open_until = -1.0
        self._b_got_beacon = False
        cfg = self.cfg
        self._ping_window_s = cfg.rx_window_s(cfg.ping_sf, self.phy.bw_hz)
        self._beacon_window_s = beacon_toa_s + 2 * cfg.max_rx_error_s

    def start(self) -> None:
        """Schedule the class B windows from the first beacon on."""
        self.kernel.call_at(self.cfg.beacon_period_s - self._b_lead(), self._beacon_window)

    def _b_lead(self) -> float:
        return self.cfg.max_rx_error_s + 1e-3

    def _radio_busy_until(self, now: float) -> float:
        period = self.cfg.beacon_period_s
        next_beacon = (now // period + 1) * period
        last_beacon = next_beacon - period
        if now < last_beacon + self.BEACON_RESERVED_S and last_beacon > 0:
            return max(last_beacon + self.BEACON_RESERVED_S, self._b_open_until)
        if now > next_beacon - self.BEACON_GUARD_S:
            return next_beacon + self.BEACON_RESERVED_S
        return max(now, self._b_open_until)

    def _free_for_class_b(self) -> bool:
        return self._current is None and self.radio.state is RadioState.SLEEP

    def _beacon_window(self) -> None:
        now = self.kernel.now()
        beacon_at = now + self._b_lead()
        self.kernel.call_at(beacon_at + self.cfg.beacon_period_s - self._b_lead(),
                            self._beacon_window)
        if not self._free_for_class_b():
            self.b.windows_skipped += 1
            return
        self._b_got_beacon = False
        self._open_b(self.cfg.beacon_sf, self.beacon_channel,
                     self._b_lead() + self._beacon_window_s, "beacon")
        period = self.cfg.ping_period_s()
        slots = max(round(period / 0.03), 1)
        for k in range(int(self.cfg.beacon_period_s // period)):
            offset = self.BEACON_RESERVED_S + k * period + self.rng.randrange(slots) * 0.03
            if offset + self._ping_window_s < self.cfg.beacon_period_s - self.BEACON_GUARD_S:
                self.kernel.call_at(beacon_at + offset, self._ping_slot)

    def _ping_slot(self) -> None:
        if not self._free_for_class_b():
            self.b.windows_skipped += 1
            return
        self.b.ping_slots_opened += 1
        self._open_b(self.cfg.ping_sf, self.beacon_channel, self._ping_window_s, "ping")

    def _open_b(self, sf: int, channel: int, window_s: float, what: str) -> None:
        self.radio.sf = sf
        self.radio.wake()
        self.radio.start_rx(channel)
        opened = self.kernel.now()
        self._b_open_until = opened + window_s
        self.kernel.call_later(window_s, self._close_b, opened, what)

    def _close_b(self, opened: float, what: str) -> None:
        if self.radio.receiving():
            self.kernel.call_at(self.radio.receiving_until, self._close_b, opened, what,
                                priority=_RELEASE_PRIORITY)
            self._b_open_until = self.radio.receiving_until
            return
        self.radio.idle()
        self.radio.sleep()
        self.radio.sf = self.phy.sf
        self.counters.rx_window_s += self.kernel.now() - opened
        if what == "beacon":
            if self._b_got_beacon:
                self.b.beacons_received += 1
            else:
                self.b.beacons_lost += 1

    def _on_frame(self, tx: Transmission, rssi_dbm: float, margin_db: float) -> None:
        if isinstance(tx.frame, Beacon):
            self._b_got_beacon = True
            return
        super()._on_frame(tx, rssi_dbm, margin_db)
