"""A LoRaWAN class A end device (LoRaWAN 1.0.3 sections 3.3 and 18; EU868 settings in
``lorawan_eu868.toml``).

The device sends each item as soon as it can (unslotted ALOHA): on a channel drawn at
random among the uplink channels whose sub-band's duty cycle allows it now, else at the
earliest time one does. After every uplink it sleeps, opens RX1 ``receive_delay1`` after
the uplink's end on the same channel and SF, and, when nothing came, RX2
``receive_delay2`` after it on 869.525 MHz at SF12 (both through
:class:`~dticn.mac.lorawan.rx_window.ReceiveWindow`). A confirmed uplink without an ACK in
either window is sent again after the retransmission timeout (2 +- 1 s), up to
``max_transmissions`` times; an unconfirmed one is sent once. A downlink with FPending set
makes the device send an empty uplink at once to open windows again (section 4.3.1.7).
A class A device is reachable only after its own uplinks, so a device that may be asked
for something sends an empty uplink every ``report_s`` seconds in which it sent nothing (a
keep-alive, counted as a frame).
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable
from typing import Any

from dticn.mac.frames import RxMeta
from dticn.mac.lorawan.end import LorawanEnd
from dticn.mac.lorawan.messages import DeviceCounters, Downlink, Uplink
from dticn.mac.lorawan.rx_window import ReceiveWindow
from dticn.mac.lorawan_config import LorawanConfig
from dticn.mac.platform import MacRequest, Status
from dticn.phy.airtime import LoRaParams, time_on_air
from dticn.phy.dutycycle import DutyCycleTracker
from dticn.phy.medium import Transmission
from dticn.phy.radio import SimRadio
from dticn.sim.kernel import EventKernel


class ClassADevice(LorawanEnd):
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
        super().__init__(address, kernel, duty, config, phy, uplink_channels, rx2_channel)
        self.gateway = gateway
        self.radio = radio
        self.rng = rng
        self.confirmed = confirmed
        self.report_s = report_s
        self.queue: deque[MacRequest] = deque()
        self.counters = DeviceCounters()
        self.rx_window = ReceiveWindow(kernel, radio, phy.sf)
        self._fcnt = 0
        self._current: Uplink | None = None
        self._pending_start = False
        self._tx_end = 0.0
        self._last_uplink = 0.0
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
        # observers see :class:`MacEvent` kinds "tx" (detail attempt, airtime_s, empty),
        # "delivered" (ACKed, or an unconfirmed uplink sent), "failed" (no ACK) and
        # "drop" (queue full)

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
        req = self._request(dest, payload, slot, on_result, context, "maximum")
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
        self.kernel.call_at(now + self.cfg.receive_delay1_s - lead, self.rx_window.open,
                            channel, self.phy.sf, self._rx1_s, self._rx1_closed)

    def _lead_s(self, sf: int, window_s: float) -> float:
        """How long before the expected downlink a window opens: LoRaMac-node centres the
        window on the preamble (offset 4 T_sym - window / 2); at least 1 ms early, since the
        medium hands a frame only to a receiver that listened as it began."""
        symbol_s = (1 << sf) / self.phy.bw_hz
        return max(window_s / 2 - 4 * symbol_s, 0.0) + 1e-3

    # -- receive windows ---------------------------------------------------------------
    def _rx1_closed(self, listened_s: float) -> None:
        """RX1 is over: RX2 when nothing came in it, else the attempt is over."""
        self._window_rx_s += listened_s
        if self._got_downlink:
            self._end_attempt(self.kernel.now())
            return
        lead = self._lead_s(self._rx2_sf, self._rx2_s)
        self.kernel.call_at(self._tx_end + self.cfg.receive_delay2_s - lead,
                            self.rx_window.open, self.rx2_channel, self._rx2_sf,
                            self._rx2_s, self._rx2_closed)

    def _rx2_closed(self, listened_s: float) -> None:
        self._window_rx_s += listened_s
        self._end_attempt(self.kernel.now())

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
