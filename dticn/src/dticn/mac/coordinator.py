"""The PAN coordinator (the LoRa gateway's MAC): beacons, GTS schedule, ACKs, downlink.

The coordinator is mains-powered, so its energy is not modelled; it listens according
to its schedule (every CAP on the CAP channel, every uplink GTS on the cell's channel)
instead of through a per-slot radio state, which keeps idle slots out of the event loop.
It is half-duplex: nothing is received while it transmits. Its duty cycle is booked and
reported per sub-band like every device's.

Upper interface: ``send(dest, payload, slot="gts"|"cap", on_result=cb)``,
``on_receive = fn(src, payload, RxMeta)``, ``next_slot_time(node, direction, after)``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from dticn.mac.cap import CapAccess
from dticn.mac.dsme_config import MacConfig
from dticn.mac.endpoint import MacEndpoint
from dticn.mac.frames import BROADCAST, Frame, FrameKind, RxMeta
from dticn.mac.gts import ALLOCATORS, CapacityError, Direction, GtsTable
from dticn.mac.gts_sender import DownlinkGts, GtsQueue
from dticn.mac.platform import MacObserver, MacRequest, Platform, Status
from dticn.phy.airtime import time_on_air
from dticn.phy.medium import Transmission


class DsmeCoordinator(MacEndpoint):
    """PAN coordinator MAC of one gateway."""

    def __init__(self, address: int, platform: Platform, config: MacConfig, table: GtsTable,
                 *, allocator: str = "first-fit", beacons: bool = True) -> None:
        if allocator not in ALLOCATORS:
            raise ValueError(f"allocator={allocator!r}: use one of {sorted(ALLOCATORS)}")
        self.address = address
        self.p = platform
        self.cfg = config
        self.table = table
        self.allocate = ALLOCATORS[allocator]
        self.send_beacons = beacons
        self.cap = CapAccess(platform, config, self._cap_finished, self._cap_event)
        self._cap_requests: dict[int, MacRequest] = {}
        self._seq = 0
        self._last_seq: dict[int, int] = {}
        self.on_receive: Callable[[int, bytes, RxMeta], Any] | None = None
        self.observers: list[MacObserver] = []
        self.beacons_sent = 0
        self.acks_sent = 0
        self.ack_s = time_on_air(platform.phy, config.ack_bytes)
        self.beacon_s = time_on_air(platform.phy, config.beacon_bytes)
        toa = partial(time_on_air, platform.phy)
        self.downlink_gts = DownlinkGts(
            platform, config, table, ack_s=self.ack_s,
            new_queue=lambda: GtsQueue(platform, config, toa=toa,
                                       build_frame=self._data_frame, emit=self._emit,
                                       finish=self._finish))

    @property
    def downlink_queues(self) -> dict[int, GtsQueue]:
        """Downlink requests waiting per node (the gateway scheme reads their lengths)."""
        return self.downlink_gts.queues

    # -- upper interface ----------------------------------------------------------------
    @property
    def max_payload(self) -> int:
        return self.cfg.max_payload

    def send(self, dest: int, payload: bytes, *, slot: str = "gts",
             on_result: Callable[[MacRequest], Any] | None = None,
             context: Any = None) -> MacRequest:
        """Queue ``payload`` for node ``dest`` (its next downlink GTS, or the CAP)."""
        if len(payload) > self.cfg.max_payload:
            raise ValueError(
                f"payload of {len(payload)} bytes exceeds the MAC's {self.cfg.max_payload}; "
                "fragment above the MAC (NDNLPv2)"
            )
        req = MacRequest(dest, bytes(payload), slot, self.p.clock.now(), on_result,
                         context=context)
        if slot == "gts":
            if not self.table.of(dest, Direction.DOWN):
                raise ValueError(
                    f"node {dest} has no downlink GTS; allocate one (scenario downlink=True) "
                    "or send in the CAP (slot='cap', the node must keep its receiver on)"
                )
            self.downlink_gts.submit(dest, req)
        elif slot == "cap":
            frame = self._data_frame(req)
            self._cap_requests[id(frame)] = req
            self.cap.submit(frame)
        else:
            raise ValueError(f"slot={slot!r}: use 'gts' or 'cap'")
        return req

    def next_slot_time(self, node: int, direction: Direction | str, after: float
                       ) -> float | None:
        """Start of ``node``'s next GTS in ``direction`` at or after ``after`` (RICE hint)."""
        return self.table.next_slot_time(node, Direction(direction), after)

    # -- operation ----------------------------------------------------------------------
    def start(self) -> None:
        if self.send_beacons:
            self.p.clock.call_later(0.0, self._beacon)

    def _beacon(self) -> None:
        now = self.p.clock.now()
        frame = Frame(FrameKind.BEACON, self.address, BROADCAST, self.beacons_sent & 0xFF,
                      self.cfg.beacon_bytes)
        self.p.duty.record(self.cfg.beacon_channel, now, self.beacon_s)
        self.p.radio.transmit(self.cfg.beacon_channel, BROADCAST, frame, self.beacon_s,
                             lambda: None)
        self.beacons_sent += 1
        self.p.clock.call_later(self.cfg.timing.beacon_interval_s, self._beacon)

    def _cap_event(self, kind: str, detail: dict[str, Any]) -> None:
        self._emit(kind, **detail)

    def _cap_finished(self, frame: Frame, status: Status, attempts: int) -> None:
        req = self._cap_requests.pop(id(frame), None)
        if req is not None:
            req.attempts = attempts
            self._finish(req, status)

    # -- medium (Listener protocol) ----------------------------------------------------
    def listening(self, channel: int, sf: int, start: float) -> bool:
        radio = self.p.radio
        if sf != radio.sf:
            return False
        now = self.p.clock.now()
        if radio.transmitting_during(start, max(now, start)):  # type: ignore[attr-defined]
            return False
        at = start + 1e-9          # frames start on slot boundaries: round up, not down
        if self.cfg.timing.in_cap(at):
            return channel == self.cfg.cap_channel
        cell = self.table.cell_during(channel, at)
        if cell is None:
            return False
        # Uplink cells: always; downlink cells: while an ACK from that node is awaited.
        return cell.direction is Direction.UP or cell.device in self.downlink_gts.inflight

    def preamble(self, tx: Transmission) -> None:
        return None

    def deliver(self, tx: Transmission, rssi_dbm: float, margin_db: float) -> None:
        frame = tx.frame
        if frame.kind is FrameKind.ACK:
            if not self.downlink_gts.on_ack(frame.src, frame.seq):
                self.cap.on_ack(frame.seq)
            return
        if frame.ack_request:
            self._send_ack(frame, tx.channel)
        if frame.kind is FrameKind.ASSOCIATION_REQUEST:
            self._associate(frame)
            return
        if frame.kind is not FrameKind.DATA:
            return
        if self._last_seq.get(frame.src) == frame.seq:
            self._emit("duplicate", src=frame.src)
            return
        self._last_seq[frame.src] = frame.seq
        meta = RxMeta(self.p.clock.now(), rssi_dbm, margin_db, tx.channel, tx.sf)
        self._emit("rx", src=frame.src, bytes=len(frame.payload), start=tx.start)
        if self.on_receive is not None:
            self.on_receive(frame.src, frame.payload, meta)

    def _send_ack(self, frame: Frame, channel: int) -> None:
        ack = Frame(FrameKind.ACK, self.address, frame.src, frame.seq, self.cfg.ack_bytes)

        def go() -> None:
            self.p.duty.record(channel, self.p.clock.now(), self.ack_s)
            self.acks_sent += 1
            self.p.radio.transmit(channel, ack.dst, ack, self.ack_s, lambda: None)

        self.p.clock.call_later(self.cfg.turnaround_s, go)

    def _associate(self, frame: Frame) -> None:
        node = frame.src
        cells = list(self.table.by_device.get(node, ()))
        if not cells:
            requests = [(node, Direction(d)) for d in frame.info.get("directions", ["up"])]
            try:
                cells = self.allocate(self.table, requests)
            except CapacityError as exc:
                self._emit("gts_denied", node=node, reason=str(exc))
                cells = []
        response = Frame(FrameKind.ASSOCIATION_RESPONSE, self.address, node, self._next_seq(),
                         self.cfg.association_response_bytes, ack_request=True,
                         info={"gts": cells})
        self._emit("association_response", node=node, cells=len(cells))
        self.cap.submit(response)
