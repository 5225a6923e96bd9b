"""A LoRaWAN gateway and its network server (LoRaWAN 1.0.3 sections 3.3 and 4; class B's
beacons and ping slots: :class:`~dticn.mac.lorawan.class_b.ClassBGateway`).

The gateway hears up to ``demodulators`` frames at once on any uplink channel and SF, and
nothing while it transmits (half duplex). Its network server keeps a downlink queue per
device (what the upper layer sends to it) and answers an uplink that asks for an ACK or
finds a downlink waiting: the head of the queue (with the ACK bit when asked) in RX1 when
the sub-band's hourly duty cycle, its own transmitter and RX1's payload limit allow, else
in RX2 (51 bytes at SF12), else an ACK alone or nothing; FPending tells the device that
more is queued.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dticn.mac.frames import RxMeta
from dticn.mac.lorawan.end import LorawanEnd
from dticn.mac.lorawan.messages import Downlink, GatewayCounters, Uplink
from dticn.mac.lorawan.rx_window import RELEASE_PRIORITY
from dticn.mac.lorawan_config import LorawanConfig
from dticn.mac.platform import MacRequest, Status
from dticn.phy.airtime import LoRaParams, time_on_air
from dticn.phy.dutycycle import DutyCycleTracker
from dticn.phy.medium import Transmission
from dticn.phy.radio import CoordinatorRadio
from dticn.sim.kernel import EventKernel

#: The network server decides a downlink after everything the uplink caused at the same
#: instant (the NDN gateway's forwarding is instantaneous here; a real network server has
#: until RX1 minus the gateway's lead time, hundreds of milliseconds).
_ANSWER_PRIORITY = 10


@dataclass
class _Reception:
    tx: Transmission
    lost_half_duplex: bool = False


class LorawanGateway(LorawanEnd):
    """The gateway and its network server (module docstring); the medium's listener."""

    def __init__(self, address: int, kernel: EventKernel, radio: CoordinatorRadio,
                 duty: DutyCycleTracker, config: LorawanConfig, phy: LoRaParams,
                 uplink_channels: int, rx2_channel: int) -> None:
        super().__init__(address, kernel, duty, config, phy, uplink_channels, rx2_channel)
        self.radio = radio
        self.counters = GatewayCounters()
        self._locked: dict[tuple[int, int, float], _Reception] = {}
        self._downlinks: list[tuple[float, float]] = []     # scheduled (start, end)
        self._seen: dict[int, int] = {}                     # device -> last FCnt delivered
        #: What waits per device for its next receive window (``send``).
        self.downlink_queues: dict[int, deque[MacRequest]] = {}
        #: When each device's last uplink ended (the RICE hint reads it).
        self.last_uplink_end: dict[int, float] = {}
        #: Called once per new uplink (duplicates of a retransmission are not): the
        #: uplink and the time it was received.
        self.on_uplink: Callable[[Uplink, float], None] | None = None
        #: ``fn(src, payload, RxMeta)`` for every new uplink that carries a payload.
        self.on_receive: Callable[[int, bytes, RxMeta], Any] | None = None
        # observers see :class:`MacEvent` "tx" for every downlink carrying a payload
        # (detail airtime_s, channel, sf), "delivered" when it went out, "drop" (queue full)
        self._ack_params = {sf: LoRaParams(sf=sf, bw_hz=phy.bw_hz, cr=phy.cr,
                                           preamble=phy.preamble, crc=False)
                            for sf in range(7, 13)}
        #: Class B's beacons (:class:`~dticn.mac.lorawan.class_b.ClassBGateway`); none here.
        self.beacon_toa_s = 0.0
        self.beacons_sent = 0

    def downlink_airtime(self, payload_bytes: int, sf: int | None = None) -> float:
        """Time on air of a downlink carrying ``payload_bytes`` (RX1 at the network's SF)."""
        sf = self.phy.sf if sf is None else sf
        size = self.cfg.frame_overhead_bytes + payload_bytes if payload_bytes else \
            self.cfg.ack_bytes
        return time_on_air(self._ack_params[sf], size)

    def start(self) -> None:
        """Nothing to start for class A (class B: ``start_beacons``)."""

    def send(self, dest: int, payload: bytes, *, slot: str = "downlink",
             on_result: Callable[[MacRequest], Any] | None = None,
             context: Any = None) -> MacRequest:
        """Queue ``payload`` for device ``dest``'s next receive window (``slot`` ignored:
        class A has only the windows after its uplinks); QUEUE_FULL beyond the limit."""
        req = self._request(dest, payload, slot, on_result, context, "RX1 maximum")
        queue = self.downlink_queues.setdefault(dest, deque())
        if len(queue) >= self.cfg.queue_limit:
            self.counters.downlink_queue_drops += 1
            self._finish(req, Status.QUEUE_FULL)
            return req
        queue.append(req)
        self._queued(dest)
        return req

    def _queued(self, dest: int) -> None:
        """A downlink joined ``dest``'s queue (class A: it waits for the device's uplink)."""

    # -- Listener protocol -----------------------------------------------------------
    def listening(self, channel: int, sf: int, start: float) -> bool:
        key = (channel, sf, start)
        reception = self._locked.get(key)
        if reception is not None:          # asked again as the frame ends
            if reception.lost_half_duplex:   # set by _put_on_air as it began to send
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
        self.kernel.call_at(tx.end, self._locked.pop, key, None, priority=RELEASE_PRIORITY)

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
        """The transmitter is free over [start, end] (class B also keeps beacons free)."""
        return self._no_downlink_during(start, end)

    def _no_downlink_during(self, start: float, end: float) -> bool:
        now = self.kernel.now()
        self._downlinks = [(s, e) for s, e in self._downlinks if e > now]
        return all(e <= start or s >= end for s, e in self._downlinks)

    def _send_downlink(self, channel: int, sf: int, frame: Downlink, toa: float,
                       request: MacRequest | None = None) -> None:
        self._put_on_air(channel, sf, frame.dst, frame, toa)
        if request is not None:       # unconfirmed downlink: done once it is on air
            request.attempts = 1
            self._emit("tx", request, airtime_s=toa, channel=channel, sf=sf)
            self._finish(request, Status.DELIVERED)

    def _put_on_air(self, channel: int, sf: int, dst: int, frame: object,
                    toa: float) -> None:
        """Transmit ``frame`` now; the uplinks being received are lost (half duplex)."""
        self.radio.sf = sf
        self.radio.transmit(channel, dst, frame, toa, lambda: None)
        self.radio.sf = self.phy.sf
        self.counters.downlink_airtime_s += toa
        for reception in self._locked.values():   # frames being received are lost now
            reception.lost_half_duplex = True
