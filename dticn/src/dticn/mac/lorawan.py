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
nothing while it transmits (half duplex). Its network server keeps a downlink queue per
device (what the upper layer sends to it) and answers an uplink that asks for an ACK or
finds a downlink waiting: the head of the queue (with the ACK bit when asked) in RX1 when
the sub-band's hourly duty cycle, its own transmitter and RX1's payload limit allow, else
in RX2 (51 bytes at SF12), else an ACK alone or nothing; FPending tells the device that
more is queued, and the device then sends an empty uplink at once to open windows again
(LoRaWAN 1.0.3 section 4.3.1.7). A class A device is reachable only after its own uplinks,
so a device that may be asked for something sends an empty uplink every ``report_s``
seconds in which it sent nothing (a keep-alive, counted as a frame).

Both ends speak the interface the NDN faces use on DSME (``send(dest, payload, ...)``
returning a :class:`~dticn.mac.platform.MacRequest`, ``on_receive(src, payload, RxMeta)``,
``max_payload``, observers of :class:`~dticn.mac.platform.MacEvent`), so the same edge runs
on either MAC. Every radio state change goes through :class:`~dticn.phy.radio.SimRadio`, so
the energy meter sees the time really spent; the device also counts its uplinks, their
time on air, and its time listening and waiting in the windows for the per-event energy
profiles.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dticn.mac.frames import RxMeta
from dticn.mac.lorawan_config import LorawanConfig
from dticn.mac.platform import MacEvent, MacObserver, MacRequest, Status
from dticn.phy.airtime import LoRaParams, time_on_air
from dticn.phy.dutycycle import DutyCycleTracker
from dticn.phy.medium import BROADCAST, Transmission
from dticn.phy.radio import CoordinatorRadio, SimRadio
from dticn.phy.radio_states import RadioState
from dticn.sim.kernel import EventKernel

#: After the frame-end events of the medium (priority -10), before ordinary timers.
_RELEASE_PRIORITY = -5
#: The network server decides a downlink after everything the uplink caused at the same
#: instant (the NDN gateway's forwarding is instantaneous here; a real network server has
#: until RX1 minus the gateway's lead time, hundreds of milliseconds).
_ANSWER_PRIORITY = 10
#: Class B timing (LoRaWAN 1.0.3 sections 13.2 and 15.2): ping slots are 30 ms long and
#: start after the 2.12 s beacon-reserved time; no uplink in the 3 s before a beacon.
PING_SLOT_S = 0.030
BEACON_RESERVED_S = 2.12
BEACON_GUARD_S = 3.0
#: A class B device opens its ping window this long before the slot starts (the medium
#: hands a frame only to a receiver that listened as it began).
PING_LEAD_S = 1e-3


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
class Uplink:
    """A data frame on air: who, which frame counter, whether it asks for an ACK."""

    src: int
    fcnt: int
    payload: bytes
    confirmed: bool
    attempt: int
    generated_at: float
    request: MacRequest | None = None


@dataclass(eq=False)
class Downlink:
    """A frame from the network server to one device: an ACK, a payload, or both;
    ``fpending``: more is queued for the device."""

    dst: int
    ack_fcnt: int | None
    payload: bytes = b""
    fpending: bool = False


@dataclass
class DeviceCounters:
    """What one class A device did (frames, failures, and where its awake time went)."""

    uplinks: int = 0
    retransmissions: int = 0
    acked: int = 0
    failed: int = 0
    queue_drops: int = 0
    downlinks: int = 0
    downlink_payloads: int = 0
    empty_uplinks: int = 0
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
    downlinks_rx1: int = 0
    downlinks_rx2: int = 0
    downlinks_deferred: int = 0
    downlinks_too_large_for_rx2: int = 0
    downlinks_ping: int = 0
    downlinks_too_large_for_ping: int = 0
    downlink_queue_drops: int = 0
    downlink_airtime_s: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))


class _Reporter:
    """Observer events and request closing, as the DSME MAC reports them
    (:class:`~dticn.mac.endpoint.MacEndpoint`), on the kernel's clock."""

    address: int
    kernel: EventKernel
    observers: list[MacObserver]

    def _emit(self, kind: str, req: MacRequest | None = None, **detail: Any) -> None:
        if self.observers:
            event = MacEvent(self.kernel.now(), self.address, kind, req, detail)
            for observer in self.observers:
                observer(event)

    def _finish(self, req: MacRequest, status: Status) -> None:
        req.close(status, self.kernel.now())
        self._emit("delivered" if status is Status.DELIVERED else
                   "drop" if status is Status.QUEUE_FULL else "failed", req,
                   status=status.value)
        if req.on_result is not None:
            req.on_result(req)


class ClassADevice(_Reporter):
    """One LoRaWAN class A end device (module docstring).

    ``report_s``: send an empty uplink when nothing went up for this long (None: never;
    pure sensors need none, a node that answers Interests does).
    """

    def __init__(self, address: int, gateway: int, kernel: EventKernel, radio: SimRadio,
                 duty: DutyCycleTracker, config: LorawanConfig, phy: LoRaParams,
                 uplink_channels: int, rx2_channel: int, rng: random.Random, *,
                 confirmed: bool = False, report_s: float | None = None) -> None:
        if report_s is not None and report_s <= 0:
            raise ValueError(f"report_s={report_s}: give a positive keep-alive period")
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
        self.report_s = report_s
        self.queue: deque[MacRequest] = deque()
        self.counters = DeviceCounters()
        self._fcnt = 0
        self._current: Uplink | None = None
        self._pending_start = False
        self._tx_end = 0.0
        self._last_uplink = 0.0
        self._window_opened = 0.0
        self._window_rx_s = 0.0
        self._got_downlink = False
        self._acked = False
        self._fpending = False
        self._rx1_s = config.rx_window_s(phy.sf, phy.bw_hz)
        self._rx2_s = config.rx_window_s(config.rx2_sf, phy.bw_hz)
        self._rx2_sf = config.rx2_sf
        self.radio.on_frame = self._on_frame
        #: ``fn(src, payload, RxMeta)`` for every downlink that carries a payload.
        self.on_receive: Callable[[int, bytes, RxMeta], Any] | None = None
        #: :class:`MacEvent` kinds: "tx" (detail attempt, airtime_s, empty), "delivered"
        #: (ACKed, or an unconfirmed uplink sent), "failed" (no ACK), "drop" (queue full).
        self.observers: list[MacObserver] = []

    @property
    def max_payload(self) -> int:
        """Largest payload of one uplink at this device's data rate."""
        return self.cfg.max_payload(self.phy.sf)

    def start(self) -> None:
        """Start the keep-alive (``report_s``), at a random phase so devices spread."""
        if self.report_s is not None:
            self.kernel.call_later(self.rng.uniform(0.0, self.report_s), self._keepalive)

    # -- sending ----------------------------------------------------------------------
    def send(self, dest: int, payload: bytes, *, slot: str = "uplink",
             on_result: Callable[[MacRequest], Any] | None = None,
             context: Any = None) -> MacRequest:
        """Queue ``payload`` for the gateway (``slot`` is DSME's GTS/CAP choice: every
        LoRaWAN uplink is ALOHA, so it is ignored); QUEUE_FULL (counted) beyond the
        queue limit."""
        if dest != self.gateway:
            raise ValueError(f"a class A device sends to its gateway ({self.gateway}), "
                             f"not {dest}")
        if len(payload) > self.max_payload:
            raise ValueError(f"payload of {len(payload)} bytes exceeds LoRaWAN's "
                             f"{self.max_payload}-byte maximum at SF{self.phy.sf}; fragment "
                             "above the MAC (NDNLPv2)")
        req = MacRequest(dest, bytes(payload), slot, self.kernel.now(), on_result,
                         context=context)
        if len(self.queue) >= self.cfg.queue_limit:
            self.counters.queue_drops += 1
            self._finish(req, Status.QUEUE_FULL)
            return req
        self.queue.append(req)
        if self._current is None and not self._pending_start:
            self._start_next()
        return req

    def _keepalive(self) -> None:
        assert self.report_s is not None
        due = self._last_uplink + self.report_s
        now = self.kernel.now()
        if now + 1e-9 >= due and self._current is None and not self.queue:
            self._send_empty()
            due = now + self.report_s
        self.kernel.call_at(max(due, now + 1e-3), self._keepalive)

    def _send_empty(self) -> None:
        """An empty uplink (no FPort, no payload): opens the receive windows."""
        self.counters.empty_uplinks += 1
        self.queue.append(MacRequest(self.gateway, b"", "uplink", self.kernel.now()))
        if self._current is None and not self._pending_start:
            self._start_next()

    def _start_next(self) -> None:
        self._pending_start = False
        if self._current is not None or not self.queue:
            return
        req = self.queue.popleft()
        self._fcnt += 1
        self._current = Uplink(self.address, self._fcnt, req.payload,
                               self.confirmed and bool(req.payload), 1, req.created, req)
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
        self._last_uplink = now
        self.counters.uplinks += 1
        self.counters.uplink_tx_s += toa
        if up.attempt > 1:
            self.counters.retransmissions += 1
        if up.request is not None:
            up.request.attempts = up.attempt
        self._emit("tx", up.request, attempt=up.attempt, airtime_s=toa,
                   empty=not up.payload)

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
        self._fpending = self._fpending or frame.fpending
        if frame.payload:
            self.counters.downlink_payloads += 1
            if self.on_receive is not None:
                self.on_receive(self.gateway, frame.payload,
                                RxMeta(tx.end, rssi_dbm, margin_db, tx.channel, tx.sf))

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
            self._close(up, Status.NO_ACK)
        else:
            if up.confirmed:
                c.acked += 1
            self._close(up, Status.DELIVERED)
        self._current = None
        if self._fpending and not self.queue:    # the network has more: ask for it
            self._fpending = False
            self._send_empty()
            return
        self._fpending = False
        self._pending_start = True
        self.kernel.call_later(0.0, self._start_next)

    def _close(self, up: Uplink, status: Status) -> None:
        if up.request is not None and up.payload:
            self._finish(up.request, status)

    @property
    def pending(self) -> int:
        """Items not yet finished (queued or on their way)."""
        return len(self.queue) + int(self._current is not None)


@dataclass
class _Reception:
    tx: Transmission
    lost_half_duplex: bool = False


class LorawanGateway(_Reporter):
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
        #: What waits per device for its next receive window (``send``).
        self.downlink_queues: dict[int, deque[MacRequest]] = {}
        #: When each device's last uplink ended (the RICE hint reads it).
        self.last_uplink_end: dict[int, float] = {}
        #: Class B devices: their queued downlinks also go out in their ping slots.
        self.class_b: set[int] = set()
        self._ping_planned: set[int] = set()
        #: Called once per new uplink (duplicates of a retransmission are not): the
        #: uplink and the time it was received.
        self.on_uplink: Callable[[Uplink, float], None] | None = None
        #: ``fn(src, payload, RxMeta)`` for every new uplink that carries a payload.
        self.on_receive: Callable[[int, bytes, RxMeta], Any] | None = None
        #: :class:`MacEvent` "tx" for every downlink carrying a payload (detail airtime_s,
        #: window), "delivered" when it went out.
        self.observers: list[MacObserver] = []
        self._ack_params = {sf: LoRaParams(sf=sf, bw_hz=phy.bw_hz, cr=phy.cr,
                                           preamble=phy.preamble, crc=False)
                            for sf in range(7, 13)}
        self.beacon_toa_s = 0.0
        self.beacons_sent = 0

    @property
    def max_payload(self) -> int:
        """Largest downlink payload: RX1's limit at the network's data rate (a frame above
        RX2's 51 bytes waits for an RX1 it fits)."""
        return self.cfg.max_payload(self.phy.sf)

    def downlink_airtime(self, payload_bytes: int, sf: int | None = None) -> float:
        """Time on air of a downlink carrying ``payload_bytes`` (RX1 at the network's SF)."""
        sf = self.phy.sf if sf is None else sf
        size = self.cfg.frame_overhead_bytes + payload_bytes if payload_bytes else \
            self.cfg.ack_bytes
        return time_on_air(self._ack_params[sf], size)

    def start(self) -> None:
        """Nothing to start for class A (class B: :meth:`start_beacons`)."""

    def send(self, dest: int, payload: bytes, *, slot: str = "downlink",
             on_result: Callable[[MacRequest], Any] | None = None,
             context: Any = None) -> MacRequest:
        """Queue ``payload`` for device ``dest``'s next receive window (``slot`` ignored:
        class A has only the windows after its uplinks); QUEUE_FULL beyond the limit."""
        if len(payload) > self.max_payload:
            raise ValueError(f"payload of {len(payload)} bytes exceeds LoRaWAN's "
                             f"{self.max_payload}-byte RX1 maximum at SF{self.phy.sf}; "
                             "fragment above the MAC (NDNLPv2)")
        req = MacRequest(dest, bytes(payload), slot, self.kernel.now(), on_result,
                         context=context)
        queue = self.downlink_queues.setdefault(dest, deque())
        if len(queue) >= self.cfg.queue_limit:
            self.counters.downlink_queue_drops += 1
            self._finish(req, Status.QUEUE_FULL)
            return req
        queue.append(req)
        if dest in self.class_b:
            self._plan_ping(dest)
        return req

    # -- class B ping slots ------------------------------------------------------------
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
        self.last_uplink_end[up.src] = tx.end
        if self._seen.get(up.src, 0) >= up.fcnt:
            self.counters.duplicates += 1
        else:
            self._seen[up.src] = up.fcnt
            if self.on_uplink is not None:
                self.on_uplink(up, tx.end)
            if up.payload and self.on_receive is not None:
                self.on_receive(up.src, up.payload,
                                RxMeta(tx.end, rssi_dbm, margin_db, tx.channel, tx.sf))
        # decided after everything this uplink causes at this instant (the upper layer
        # may queue its answer now): an ACK, a queued downlink, or nothing
        self.kernel.call_at(tx.end, self._answer, up, tx, priority=_ANSWER_PRIORITY)

    # -- downlinks ---------------------------------------------------------------------
    def _answer(self, up: Uplink, tx: Transmission) -> None:
        """The head of the device's queue (and the ACK when asked) in RX1, else RX2, else
        the ACK alone where it fits, else nothing (each case counted)."""
        queue = self.downlink_queues.get(up.src) or deque()
        head = queue[0] if queue else None
        windows = ((tx.end + self.cfg.receive_delay1_s, tx.channel, tx.sf, "rx1"),
                   (tx.end + self.cfg.receive_delay2_s, self.rx2_channel, self.cfg.rx2_sf,
                    "rx2"))
        for start, channel, sf, which in windows:
            carry = head if head is not None and len(head.payload) <= \
                self.cfg.max_payload(sf) else None
            if head is not None and carry is None:
                self.counters.downlinks_too_large_for_rx2 += 1
            if carry is None and not up.confirmed:
                continue
            payload = carry.payload if carry is not None else b""
            toa = self.downlink_airtime(len(payload), sf)
            if not self._free(start, start + toa) or not self.duty.allowed(channel, start):
                continue
            if carry is not None:
                queue.popleft()
            frame = Downlink(up.src, up.fcnt if up.confirmed else None, payload,
                             fpending=bool(queue))
            self._downlinks.append((start, start + toa))
            self.duty.record(channel, start, toa)
            self.kernel.call_at(start, self._send_downlink, channel, sf, frame, toa, carry)
            if up.confirmed:
                if which == "rx1":
                    self.counters.acks_rx1 += 1
                else:
                    self.counters.acks_rx2 += 1
            if carry is not None:
                if which == "rx1":
                    self.counters.downlinks_rx1 += 1
                else:
                    self.counters.downlinks_rx2 += 1
            return
        if up.confirmed:
            self.counters.acks_dropped += 1
        if head is not None:
            self.counters.downlinks_deferred += 1

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
                       toa: float, request: MacRequest | None = None) -> None:
        self.radio.sf = sf
        dst = frame.dst if isinstance(frame, Downlink) else BROADCAST
        self.radio.transmit(channel, dst, frame, toa, lambda: None)
        self.radio.sf = self.phy.sf
        self.counters.downlink_airtime_s += toa
        for reception in self._locked.values():   # frames being received are lost now
            reception.lost_half_duplex = True
        if request is not None:       # unconfirmed downlink: done once it is on air
            request.attempts = 1
            self._emit("tx", request, airtime_s=toa, channel=channel, sf=sf)
            self._finish(request, Status.DELIVERED)


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
    SF, at the times :func:`ping_slot_times` gives, which the network server computes too:
    it sends a queued downlink in the device's next ping slot where its transmitter and the
    ping channel's duty cycle allow (unconfirmed, no FPending: the next slot carries the
    next frame), besides the class A windows. A class B window is skipped (counted) when
    an uplink transaction holds the radio, and an uplink waits for an open class B window
    to close; no uplink starts in the beacon guard (3 s before a beacon, section 15.2) or
    the beacon-reserved time (2.12 s after it).
    """

    BEACON_GUARD_S = BEACON_GUARD_S
    BEACON_RESERVED_S = BEACON_RESERVED_S

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
        """Schedule the class B windows from the first beacon on (and the keep-alive)."""
        super().start()
        self.kernel.call_at(self.cfg.beacon_period_s - self._b_lead(), self._beacon_window)

    def _b_lead(self) -> float:
        return self.cfg.max_rx_error_s + 1e-3

    def _radio_busy_until(self, now: float) -> float:
        return max(class_b_uplink_start(self.cfg, now), self._b_open_until)

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
            self._open_b(self.cfg.beacon_sf, self.beacon_channel,
                         self._b_lead() + self._beacon_window_s, "beacon")
        for start in ping_slot_times(self.cfg, beacon_at, self.address):
            self.kernel.call_at(start - PING_LEAD_S, self._ping_slot)

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
