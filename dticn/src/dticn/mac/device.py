"""A DSME end device (a LoRa node): beacon tracking, GTS and CAP transmission, association.

Upper interface (what a LoRa face of the forwarder uses):

* ``send(dest, payload, slot="gts" | "cap", on_result=cb) -> MacRequest``: queue a frame;
  ``cb(request)`` fires once with ``request.status`` (delivered, no_ack, ...).
* ``on_receive = fn(src, payload, RxMeta)``: called for every new (non-duplicate) frame.
* ``next_slot_time(direction, after)``: start of the node's next uplink/downlink GTS.
* ``observers``: callables receiving :class:`~dticn.mac.platform.MacEvent`.

Periodic upkeep (waking for every beacon and every downlink GTS) runs either as events
(``upkeep="events"``, exact, slow) or is left out of the event loop (``upkeep="closed"``)
and booked in closed form by :mod:`dticn.radio.upkeep`; frames always run as events.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from dticn.energy.model import EnergyMeter
from dticn.mac.ack import AckWait
from dticn.mac.cap import CapAccess
from dticn.mac.config import MacConfig
from dticn.mac.endpoint import MacEndpoint
from dticn.mac.frames import Frame, FrameKind, RxMeta
from dticn.mac.gts import Direction, Gts
from dticn.mac.platform import MacObserver, MacRequest, Platform, Status
from dticn.mac.states import (
    GTS_TRANSITIONS,
    SYNC_TRANSITIONS,
    GtsEvent,
    GtsState,
    SyncEvent,
    SyncState,
)
from dticn.phy.airtime import time_on_air
from dticn.phy.medium import Transmission
from dticn.phy.states import RadioState, fire

UPKEEP_MODES = ("closed", "events")
ASSOCIATION_MODES = ("static", "handshake")


class DsmeDevice(MacEndpoint):
    """One end node's MAC; it reaches the world only through its :class:`Platform`."""

    def __init__(self, address: int, coordinator: int, platform: Platform, config: MacConfig,
                 *, meter: EnergyMeter, upkeep: str = "closed",
                 association: str = "static",
                 gts_directions: tuple[str, ...] = ("up",)) -> None:
        if upkeep not in UPKEEP_MODES:
            raise ValueError(f"upkeep={upkeep!r}: use one of {UPKEEP_MODES}")
        if association not in ASSOCIATION_MODES:
            raise ValueError(f"association={association!r}: use one of {ASSOCIATION_MODES}")
        self.address = address
        self.coordinator = coordinator
        self.p = platform
        self.cfg = config
        self.meter = meter
        self.upkeep = upkeep
        self.association = association
        self.gts_directions = gts_directions   # what the association request asks for
        self.sync = SyncState.UNASSOCIATED
        self.gts_state = GtsState.NONE
        self.uplink: list[Gts] = []
        self.downlink: list[Gts] = []
        self.gts_queue: deque[MacRequest] = deque()
        self.cap = CapAccess(platform, config, self._cap_finished, self._cap_event)
        self.cap.idle_policy = self._cap_idle
        self._in_cap_listen = False
        #: Closed-form upkeep with cap_rx: CAP time the node's own CAP transactions held the
        #: radio (not idle listening, so the closed form must not book it as RX again).
        self.cap_held_s = 0.0
        self._held_since: float | None = None
        if upkeep == "closed" and config.cap_rx:
            self.cap.on_hold = self._cap_hold
        self._cap_requests: dict[int, MacRequest] = {}
        self._cap_waiting: deque[Frame] = deque()
        self._seq = 0
        self._last_seq: dict[int, int] = {}
        self.on_receive: Callable[[int, bytes, RxMeta], Any] | None = None
        self.observers: list[MacObserver] = []
        self.tracking_since: float | None = None
        self.missed_beacons = 0
        self.lost_beacons = 0
        self.sync_losses = 0
        #: Frames refused because the CAP queue was full (``cap_queue_limit``).
        self.queue_drops = 0
        self._toa: dict[int, float] = {}
        self.ack_s = self.toa(config.ack_bytes)
        self.beacon_s = self.toa(config.beacon_bytes)
        self.gts_ack = AckWait(platform, 2 * config.turnaround_s + self.ack_s)
        self._gts_wake_handle: Any = None
        self._gts_inflight: tuple[MacRequest, Frame] | None = None
        self._frames: dict[int, Frame] = {}
        self._beacon_timer: Any = None
        self._assoc_timer: Any = None

    # -- upper interface ----------------------------------------------------------------
    @property
    def max_payload(self) -> int:
        return self.cfg.max_payload

    def send(self, dest: int, payload: bytes, *, slot: str = "gts",
             on_result: Callable[[MacRequest], Any] | None = None,
             context: Any = None) -> MacRequest:
        """Queue ``payload`` for ``dest``; GTS frames wait for the node's next uplink slot."""
        if len(payload) > self.max_payload:
            raise ValueError(
                f"payload of {len(payload)} bytes exceeds the MAC's {self.max_payload} "
                "(127-byte PSDU minus header and FCS); fragment above the MAC (NDNLPv2)"
            )
        if slot not in ("gts", "cap"):
            raise ValueError(f"slot={slot!r}: use 'gts' (guaranteed) or 'cap' (CSMA/CA)")
        req = MacRequest(dest, bytes(payload), slot, self.p.clock.now(), on_result,
                         context=context)
        self._emit("enqueue", req)
        if slot == "gts":
            if len(self.gts_queue) >= self.cfg.queue_limit:
                self._finish(req, Status.QUEUE_FULL)
                return req
            self.gts_queue.append(req)
            self._kick_gts()
        else:
            limit = self.cfg.cap_queue_limit
            if limit is not None and (len(self.cap.queue) + len(self._cap_waiting)
                                      + int(self.cap.busy)) >= limit:
                self.queue_drops += 1
                self._finish(req, Status.QUEUE_FULL)
                return req
            frame = self._data_frame(req)
            if not self.cfg.cap_ack:
                frame.ack_request = False
            self._cap_requests[id(frame)] = req
            if self.sync is SyncState.TRACKING:
                self.cap.submit(frame)
            else:        # data waits for association / resynchronisation
                self._cap_waiting.append(frame)
        return req

    def next_slot_time(self, direction: Direction | str, after: float) -> float | None:
        """Start of this node's next GTS in ``direction`` at or after ``after``."""
        cells = self.uplink if Direction(direction) is Direction.UP else self.downlink
        timing = self.cfg.timing
        times = [timing.next_periodic(g.offset(timing), timing.multisuperframe_s, after)
                 for g in cells]
        return min(times) if times else None

    # -- set-up -------------------------------------------------------------------------
    def install_gts(self, cells: list[Gts]) -> None:
        """Take the GTS the coordinator gave this node (statically or by handshake)."""
        self.uplink = sorted(g for g in cells if g.direction is Direction.UP)
        self.downlink = sorted(g for g in cells if g.direction is Direction.DOWN)

    def start(self) -> None:
        """Begin operation: pre-associated (static, as the artifact) or scan and associate."""
        if self.association == "static":
            self.sync = fire(SYNC_TRANSITIONS, self.sync, SyncEvent.STATIC)
            self.gts_state = fire(GTS_TRANSITIONS, self.gts_state, GtsEvent.STATIC)
            self._begin_tracking()
        else:
            self._scan()

    def _release_cap_waiting(self) -> None:
        while self._cap_waiting:
            self.cap.submit(self._cap_waiting.popleft())

    def _begin_tracking(self) -> None:
        self.tracking_since = self.p.clock.now()
        self._release_cap_waiting()
        if self.upkeep == "events":
            self._schedule_beacon(self.p.clock.now())
            for cell in self.downlink:
                self._schedule_downlink(cell, self.p.clock.now())
            if self.cfg.cap_rx:
                self._schedule_cap_listen(self.p.clock.now())
        self._kick_gts()

    # -- helpers ------------------------------------------------------------------------
    def toa(self, psdu_bytes: int) -> float:
        cached = self._toa.get(psdu_bytes)
        if cached is None:
            cached = self._toa[psdu_bytes] = time_on_air(self.p.phy, psdu_bytes)
        return cached

    def _radio_state(self) -> RadioState:
        return self.p.radio.state

    # -- beacon tracking (upkeep="events") ------------------------------------------------
    def _schedule_beacon(self, after: float) -> None:
        timing, cfg = self.cfg.timing, self.cfg
        lead = cfg.beacon_guard_s + cfg.wakeup_s
        beacon_at = timing.next_periodic(0.0, timing.beacon_interval_s, after + lead)
        self.p.clock.call_later(beacon_at - lead - self.p.clock.now(), self._beacon_wake,
                                beacon_at)

    def _beacon_wake(self, beacon_at: float) -> None:
        if self._radio_state() is not RadioState.SLEEP:
            self._schedule_beacon(beacon_at)     # busy (should not happen): skip this one
            return
        self.p.radio.wake()
        self.p.clock.call_later(self.cfg.wakeup_s, self._beacon_open, beacon_at)

    def _beacon_open(self, beacon_at: float) -> None:
        self.p.radio.start_rx(self.cfg.beacon_channel)
        close = beacon_at + self.beacon_s + self.cfg.beacon_guard_s
        self._beacon_timer = self.p.clock.call_later(close - self.p.clock.now(),
                                                     self._beacon_timeout, beacon_at)

    def _beacon_timeout(self, beacon_at: float) -> None:
        rearmed = self.p.after_reception(self._beacon_timeout, beacon_at)
        if rearmed is not None:
            self._beacon_timer = rearmed
            return
        self._beacon_timer = None
        self.p.radio.sleep()
        self.missed_beacons += 1
        self.lost_beacons += 1
        self._emit("beacon_lost", missed=self.missed_beacons)
        if self.missed_beacons >= self.cfg.max_lost_beacons:
            self.sync = fire(SYNC_TRANSITIONS, self.sync, SyncEvent.SYNC_LOST)
            self.sync_losses += 1
            self._emit("sync_lost")
            self._scan()
            return
        self.sync = fire(SYNC_TRANSITIONS, self.sync, SyncEvent.BEACON_LOST)
        self._schedule_beacon(beacon_at)

    def _scan(self) -> None:
        """Receiver on, on the beacon channel, until a beacon arrives."""
        radio = self.p.radio
        if self._radio_state() is RadioState.SLEEP:
            radio.wake()
        elif self._radio_state() is not RadioState.STANDBY:
            radio.idle()
        radio.start_rx(self.cfg.beacon_channel)

    def _on_beacon(self, tx: Transmission) -> None:
        now = self.p.clock.now()
        if self.sync is SyncState.TRACKING:
            if self._beacon_timer is None:
                return                           # heard outside a window (scan overlap)
            self._beacon_timer.cancel()
            self._beacon_timer = None
            self.p.radio.sleep()
            self.missed_beacons = 0
            self.sync = fire(SYNC_TRANSITIONS, self.sync, SyncEvent.BEACON_FOUND)
            self._schedule_beacon(now)
        elif self.sync is SyncState.LOST:
            self.p.radio.sleep()
            self.missed_beacons = 0
            self.sync = fire(SYNC_TRANSITIONS, self.sync, SyncEvent.BEACON_FOUND)
            self._emit("resynchronised")
            self._schedule_beacon(now)
            self._kick_gts()
            self._release_cap_waiting()
        elif self.sync is SyncState.UNASSOCIATED:
            self.p.radio.sleep()
            self.sync = fire(SYNC_TRANSITIONS, self.sync, SyncEvent.BEACON_FOUND)
            self._request_association()

    # -- association (association="handshake") ----------------------------------------
    def _request_association(self) -> None:
        frame = Frame(FrameKind.ASSOCIATION_REQUEST, self.address, self.coordinator,
                      self._next_seq(), self.cfg.association_request_bytes, ack_request=True,
                      info={"directions": list(self.gts_directions)})
        self.sync = fire(SYNC_TRANSITIONS, self.sync, SyncEvent.ASSOCIATION_REQUESTED)
        self.gts_state = fire(GTS_TRANSITIONS, self.gts_state, GtsEvent.REQUEST)
        self.cap.submit(frame)

    def _association_failed(self) -> None:
        self._assoc_timer = None
        if self._radio_state() is not RadioState.SLEEP:
            self.p.radio.sleep()
        self.sync = fire(SYNC_TRANSITIONS, self.sync, SyncEvent.ASSOCIATION_FAILED)
        self.gts_state = fire(GTS_TRANSITIONS, self.gts_state, GtsEvent.TIMEOUT)
        self._emit("association_failed")
        self._scan()

    def _on_association_response(self, frame: Frame, tx: Transmission) -> None:
        if self.sync is not SyncState.ASSOCIATING or self._assoc_timer is None:
            return
        self._assoc_timer.cancel()
        self._assoc_timer = None
        self._send_ack(frame, tx.channel, then_sleep=True)
        cells = frame.info.get("gts", [])
        if not cells:
            self.gts_state = fire(GTS_TRANSITIONS, self.gts_state, GtsEvent.RESPONSE_DENIED)
        else:
            self.gts_state = fire(GTS_TRANSITIONS, self.gts_state, GtsEvent.RESPONSE_OK)
        self.install_gts(cells)
        self.sync = fire(SYNC_TRANSITIONS, self.sync, SyncEvent.ASSOCIATED)
        self._emit("associated", cells=len(cells))
        # Start tracking once the ACK of the response is out (the radio is busy until then).
        self.p.clock.call_later(2 * self.cfg.turnaround_s + self.ack_s, self._begin_tracking)

    # -- CAP ----------------------------------------------------------------------------
    def _cap_event(self, kind: str, detail: dict[str, Any]) -> None:
        self._emit(kind, **detail)

    def _cap_finished(self, frame: Frame, status: Status, attempts: int) -> None:
        if frame.kind is FrameKind.ASSOCIATION_REQUEST:
            if status is Status.DELIVERED:
                self.p.radio.wake()
                self.p.radio.start_rx(self.cfg.cap_channel)
                self._assoc_timer = self.p.clock.call_later(self.cfg.response_wait_s,
                                                            self._association_failed)
            else:
                self.sync = fire(SYNC_TRANSITIONS, self.sync, SyncEvent.ASSOCIATION_FAILED)
                self.gts_state = fire(GTS_TRANSITIONS, self.gts_state, GtsEvent.TIMEOUT)
                self._scan()
            return
        req = self._cap_requests.pop(id(frame), None)
        if req is not None:
            req.attempts = attempts
            self._finish(req, status)

    # -- uplink GTS ---------------------------------------------------------------------
    def _kick_gts(self) -> None:
        if (not self.gts_queue or self._gts_wake_handle is not None
                or self._gts_inflight is not None or self.sync is not SyncState.TRACKING
                or not self.uplink):
            return
        now = self.p.clock.now()
        after = now + self.cfg.wakeup_s
        # Do not wake for a slot the duty-cycle off-time forbids anyway.
        after = max(after, self.p.duty.earliest(self.uplink[0].channel, after))
        when = self.next_slot_time(Direction.UP, after)
        assert when is not None
        cell = self._cell_at(self.uplink, when)
        self._gts_wake_handle = self.p.clock.call_later(when - self.cfg.wakeup_s - now,
                                                        self._gts_wake, cell)

    def _cell_at(self, cells: list[Gts], when: float) -> Gts:
        timing = self.cfg.timing
        offset = when % timing.multisuperframe_s
        return min(cells, key=lambda g: abs(g.offset(timing) - offset))

    def _take_radio(self) -> bool:
        """Get the radio to standby for a slot: wake it, or end listening through the CAP
        (the CAP ends where the first GTS begins); False when it is busy."""
        state = self._radio_state()
        if state is RadioState.SLEEP:
            self.p.radio.wake()
            return True
        if (state is RadioState.RX and self._in_cap_listen and not self.cap.busy
                and not self.p.radio.receiving()):
            self.p.radio.idle()
            return True
        return False

    def _gts_wake(self, cell: Gts) -> None:
        self._gts_wake_handle = None
        if self.sync is not SyncState.TRACKING or not self._take_radio():
            self._kick_gts_later()
            return
        self.p.clock.call_later(self.cfg.wakeup_s, self._gts_send, cell)

    def _kick_gts_later(self) -> None:
        self.p.clock.call_later(self.cfg.timing.slot_s, self._kick_gts)

    def _gts_send(self, cell: Gts) -> None:
        now = self.p.clock.now()
        req = self.gts_queue[0]
        if not self.p.duty.allowed(cell.channel, now):
            self.p.duty.deferrals += 1
            self._emit("duty_cycle_deferral", req, until=self.p.duty.earliest(cell.channel, now))
            self.p.radio.sleep()
            self._kick_gts()
            return
        frame = self._frames.get(id(req))
        if frame is None:   # retransmissions reuse the frame and its sequence number
            frame = self._frames[id(req)] = self._data_frame(req)
        toa = self.toa(frame.psdu_bytes)
        self.p.duty.record(cell.channel, now, toa)
        req.attempts += 1
        self._emit("tx", req, airtime_s=toa, slot="gts", attempt=req.attempts)
        self._gts_inflight = (req, frame)
        self.p.radio.transmit(cell.channel, frame.dst, frame, toa, lambda: self._gts_sent(cell))

    def _gts_sent(self, cell: Gts) -> None:
        assert self._gts_inflight is not None
        _, frame = self._gts_inflight
        if not frame.ack_request:
            self._gts_delivered()
            return
        self.p.radio.start_rx(cell.channel)
        self.gts_ack.expect(frame.seq, self._gts_delivered, self._gts_ack_timeout)

    def _gts_delivered(self) -> None:
        assert self._gts_inflight is not None
        req, _ = self._gts_inflight
        self._gts_inflight = None
        self.p.radio.sleep()
        self.gts_queue.popleft()
        self._finish(req, Status.DELIVERED)
        self._kick_gts()

    def _gts_ack_timeout(self) -> None:
        assert self._gts_inflight is not None
        req, _ = self._gts_inflight
        self._gts_inflight = None
        self.p.radio.sleep()
        if req.attempts > self.cfg.csma.max_frame_retries:
            self.gts_queue.popleft()
            self._finish(req, Status.NO_ACK)
        else:
            self._emit("retry", req, retries=req.attempts)
        self._kick_gts()

    def _on_ack(self, frame: Frame) -> None:
        if not self.gts_ack.on_ack(frame.seq):
            self.cap.on_ack(frame.seq)

    # -- receiver on through the CAP (cap_rx, upkeep="events") ----------------------------
    def _schedule_cap_listen(self, after: float) -> None:
        timing = self.cfg.timing
        start = timing.next_periodic(timing.slot_s, timing.superframe_s,
                                     after + self.cfg.wakeup_s)
        self.p.clock.call_later(start - self.cfg.wakeup_s - self.p.clock.now(),
                                self._cap_listen_wake, start)

    def _cap_listen_wake(self, start: float) -> None:
        self._in_cap_listen = True
        length = self.cfg.timing.cap_slots * self.cfg.timing.slot_s
        self.p.clock.call_later(start + length - self.p.clock.now(), self._cap_listen_close,
                                start)
        if self._radio_state() is RadioState.SLEEP:
            self.p.radio.wake()
            self.p.clock.call_later(self.cfg.wakeup_s, self._cap_listen_open)
        # else: a CAP transaction holds the radio; its idle policy returns to RX after it.

    def _cap_listen_open(self) -> None:
        if self._in_cap_listen and self._radio_state() is RadioState.STANDBY:
            self.p.radio.start_rx(self.cfg.cap_channel)

    def _cap_listen_close(self, start: float) -> None:
        radio = self.p.radio
        if self.p.after_reception(self._cap_listen_close, start) is not None:
            return
        self._in_cap_listen = False
        # Sleep unless a CAP transaction is waiting for its ACK right now (a transaction
        # that only waits for its next backoff wakes the radio itself when it needs it).
        if (self._radio_state() is RadioState.RX and radio.channel == self.cfg.cap_channel
                and not self.cap.awaiting_ack):
            radio.sleep()
        self._schedule_cap_listen(start)

    def _cap_hold(self, taken: bool) -> None:
        now = self.p.clock.now()
        if taken:
            self._held_since = now
            return
        if self._held_since is None:
            return
        timing = self.cfg.timing
        cap_start, cap_end = timing.cap_window(int(self._held_since // timing.superframe_s))
        overlap = min(now, cap_end) - max(self._held_since, cap_start)
        if overlap > 0:
            self.cap_held_s += overlap
        self._held_since = None

    def _cap_idle(self) -> None:
        """CapAccess between steps: back to RX while listening through the CAP, else sleep."""
        state = self._radio_state()
        if self._in_cap_listen and self.upkeep == "events":
            if state is RadioState.SLEEP:
                self.p.radio.wake()
            elif state is not RadioState.STANDBY and state is not RadioState.RX:
                self.p.radio.idle()
            if self._radio_state() is RadioState.STANDBY:
                self.p.radio.start_rx(self.cfg.cap_channel)
        elif state is not RadioState.SLEEP:
            self.p.radio.sleep()

    # -- downlink GTS -------------------------------------------------------------------
    def _schedule_downlink(self, cell: Gts, after: float) -> None:
        timing = self.cfg.timing
        when = timing.next_periodic(cell.offset(timing), timing.multisuperframe_s,
                                    after + self.cfg.wakeup_s)
        self.p.clock.call_later(when - self.cfg.wakeup_s - self.p.clock.now(),
                                self._downlink_wake, cell, when)

    def _downlink_wake(self, cell: Gts, when: float) -> None:
        if not self._take_radio():
            self._schedule_downlink(cell, when)
            return
        self.p.clock.call_later(self.cfg.wakeup_s, self._downlink_open, cell, when)

    def _downlink_open(self, cell: Gts, when: float) -> None:
        self.p.radio.start_rx(cell.channel)
        self.p.clock.call_later(self.cfg.gts_rx_window_s, self._downlink_close, cell, when)

    def _downlink_close(self, cell: Gts, when: float) -> None:
        radio = self.p.radio
        if self.p.after_reception(self._downlink_close, cell, when) is not None:
            return
        if self._radio_state() is RadioState.RX and radio.channel == cell.channel:
            radio.sleep()
        self._schedule_downlink(cell, when)

    def _virtual_downlink(self, channel: int, start: float) -> Gts | None:
        """Closed-form upkeep: the downlink cell whose RX window covers ``start``."""
        timing = self.cfg.timing
        for cell in self.downlink:
            if cell.channel != channel:
                continue
            t0 = timing.next_periodic(cell.offset(timing), timing.multisuperframe_s,
                                      start - self.cfg.gts_rx_window_s)
            if t0 <= start + 1e-9:
                return cell
        return None

    # -- medium (Listener protocol) ----------------------------------------------------
    def listening(self, channel: int, sf: int, start: float) -> bool:
        radio = self.p.radio
        if getattr(radio, "listening", None) is not None and radio.listening(channel, sf, start):
            return True
        if sf != radio.sf or self.upkeep != "closed" or self.sync is not SyncState.TRACKING:
            return False
        if self._virtual_downlink(channel, start) is not None:
            return self._radio_state() is RadioState.SLEEP
        if self.cfg.cap_rx and channel == self.cfg.cap_channel:
            timing = self.cfg.timing
            index = int(start // timing.superframe_s)
            cap_start, cap_end = timing.cap_window(index)
            return cap_start <= start < cap_end and self._radio_state() is RadioState.SLEEP
        return False

    def preamble(self, tx: Transmission) -> None:
        if self._radio_state() is RadioState.RX:
            self.p.radio.preamble(tx)  # type: ignore[attr-defined]

    def deliver(self, tx: Transmission, rssi_dbm: float, margin_db: float) -> None:
        frame = tx.frame
        virtual = self._radio_state() is not RadioState.RX
        if virtual and frame.kind is FrameKind.DATA:
            cell = self._virtual_downlink(tx.channel, tx.start)
            if cell is not None:   # book the RX beyond the closed-form window
                timing = self.cfg.timing
                t0 = timing.next_periodic(cell.offset(timing), timing.multisuperframe_s,
                                          tx.start - self.cfg.gts_rx_window_s)
                extra = tx.end - t0 - self.cfg.gts_rx_window_s
                if extra > 0:
                    self.meter.add(RadioState.RX, extra)
        if frame.kind is FrameKind.BEACON:
            self._on_beacon(tx)
        elif frame.kind is FrameKind.ACK:
            self._on_ack(frame)
        elif frame.kind is FrameKind.ASSOCIATION_RESPONSE:
            self._on_association_response(frame, tx)
        elif frame.kind is FrameKind.DATA:
            if frame.ack_request:
                self._send_ack(frame, tx.channel, then_sleep=True)
            if self._last_seq.get(frame.src) == frame.seq:
                self._emit("duplicate", src=frame.src)
                return
            self._last_seq[frame.src] = frame.seq
            meta = RxMeta(self.p.clock.now(), rssi_dbm, margin_db, tx.channel, tx.sf)
            self._emit("rx", src=frame.src, bytes=len(frame.payload))
            if self.on_receive is not None:
                self.on_receive(frame.src, frame.payload, meta)

    def _send_ack(self, frame: Frame, channel: int, *, then_sleep: bool) -> None:
        ack = Frame(FrameKind.ACK, self.address, frame.src, frame.seq, self.cfg.ack_bytes)
        radio = self.p.radio

        def go() -> None:
            state = self._radio_state()
            if state is RadioState.SLEEP:
                radio.wake()
            elif state in (RadioState.CAD, RadioState.TX):
                self._emit("ack_skipped", src=frame.src)   # radio busy: the sender retries
                return
            toa = self.ack_s
            self.p.duty.record(channel, self.p.clock.now(), toa)
            radio.transmit(channel, ack.dst, ack, toa, done)

        def done() -> None:
            if then_sleep:
                radio.sleep()
            else:
                radio.idle()

        self.p.clock.call_later(self.cfg.turnaround_s, go)
