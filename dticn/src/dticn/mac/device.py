"""A DSME end device (a LoRa node): the upper interface, composing one part per job.

Upper interface (what a LoRa face of the forwarder uses):

* ``send(dest, payload, slot="gts" | "cap", on_result=cb) -> MacRequest``: queue a frame;
  ``cb(request)`` fires once with ``request.status`` (delivered, no_ack, ...).
* ``on_receive = fn(src, payload, RxMeta)``: called for every new (non-duplicate) frame.
* ``next_slot_time(direction, after)``: start of the node's next uplink/downlink GTS.
* ``observers``: callables receiving :class:`~dticn.mac.platform.MacEvent`.

The parts (each reaches the world only through the :class:`Platform`):

* :class:`~dticn.mac.sync.SyncTracker`: association handshake, beacon tracking, sync loss;
* :class:`~dticn.mac.gts_sender.UplinkGts`: the uplink GTS path (slot, ACK, retries);
* :class:`~dticn.mac.cap.CapAccess`: CSMA/CA in the CAP;
* :class:`~dticn.mac.receive_windows.ListenWindows`: downlink-GTS and CAP receive windows;
* an upkeep strategy from :data:`~dticn.mac.upkeep.UPKEEP`: periodic windows as events
  (``upkeep="events"``, exact, slow) or booked in closed form by
  :mod:`dticn.radio.upkeep_closed_form` (``upkeep="closed"``); frames always run as events.

This class routes what the medium delivers to the part it concerns, sends ACKs and keeps
CAP data frames waiting until the node tracks beacons.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from dticn.energy.model import EnergyMeter
from dticn.mac.cap import CapAccess
from dticn.mac.dsme_config import MacConfig
from dticn.mac.endpoint import MacEndpoint
from dticn.mac.frames import Frame, FrameKind, RxMeta
from dticn.mac.gts import Direction, Gts, next_slot
from dticn.mac.gts_sender import GtsQueue, UplinkGts
from dticn.mac.platform import MacObserver, MacRequest, Platform, Status
from dticn.mac.receive_windows import BeaconWindow, ListenWindows
from dticn.mac.states import GtsState, SyncState
from dticn.mac.sync import SyncTracker
from dticn.mac.upkeep import UPKEEP
from dticn.phy.airtime import time_on_air
from dticn.phy.medium import Transmission
from dticn.phy.radio_states import RadioState

UPKEEP_MODES = tuple(UPKEEP)
ASSOCIATION_MODES = ("static", "handshake")


class DsmeDevice(MacEndpoint):
    """One end node's MAC; it reaches the world only through its :class:`Platform`."""

    def __init__(self, address: int, coordinator: int, platform: Platform, config: MacConfig,
                 *, meter: EnergyMeter, upkeep: str = "closed",
                 association: str = "static",
                 gts_directions: tuple[str, ...] = ("up",)) -> None:
        if upkeep not in UPKEEP:
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
        self.downlink: list[Gts] = []
        self._toa: dict[int, float] = {}
        self.ack_s = self.toa(config.ack_bytes)
        self.beacon_s = self.toa(config.beacon_bytes)
        self.cap = CapAccess(platform, config, self._cap_finished, self._cap_event)
        self.windows = ListenWindows(platform, config, self.cap)
        self.cap.idle_policy = self.windows.cap_idle
        self.tracker = SyncTracker(
            platform, config, self.cap, address=address, coordinator=coordinator,
            directions=gts_directions, beacon_s=self.beacon_s, ack_s=self.ack_s,
            emit=self._emit, next_seq=self._next_seq, send_ack=self._send_ack,
            install=self.install_gts, tracking=self._begin_tracking, resumed=self._resume)
        self.uplink_gts = UplinkGts(
            platform, config,
            GtsQueue(platform, config, toa=self.toa, build_frame=self._data_frame,
                     emit=self._emit, finish=self._finish),
            ack_s=self.ack_s, ready=lambda: self.tracker.tracking_beacons,
            take_radio=self.windows.take_radio)
        self.upkeep_strategy = UPKEEP[upkeep](self)
        self._cap_requests: dict[int, MacRequest] = {}
        self._cap_waiting: deque[Frame] = deque()
        self._seq = 0
        self._last_seq: dict[int, int] = {}
        self.on_receive: Callable[[int, bytes, RxMeta], Any] | None = None
        self.observers: list[MacObserver] = []
        self.tracking_since: float | None = None
        #: Frames refused because the CAP queue was full (``cap_queue_limit``).
        self.queue_drops = 0

    # -- what the parts hold, read by engines and tests ------------------------------------
    @property
    def sync(self) -> SyncState:
        return self.tracker.state

    @property
    def gts_state(self) -> GtsState:
        return self.tracker.gts_state

    @property
    def tracking_beacons(self) -> bool:
        return self.tracker.tracking_beacons

    @property
    def beacons(self) -> BeaconWindow:
        return self.tracker.beacons

    @property
    def missed_beacons(self) -> int:
        return self.tracker.missed_beacons

    @property
    def lost_beacons(self) -> int:
        return self.tracker.lost_beacons

    @property
    def sync_losses(self) -> int:
        return self.tracker.sync_losses

    @property
    def uplink(self) -> list[Gts]:
        return self.uplink_gts.cells

    @property
    def gts_queue(self) -> GtsQueue:
        return self.uplink_gts.queue

    @property
    def cap_held_s(self) -> float:
        """Closed-form upkeep with cap_rx: CAP time the node's own CAP transactions held the
        radio (not idle listening, so the closed form must not book it as RX again)."""
        return self.upkeep_strategy.cap_held_s

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
            self.uplink_gts.kick()
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
            if self.tracking_beacons:
                self.cap.submit(frame)
            else:        # data waits for association / resynchronisation
                self._cap_waiting.append(frame)
        return req

    def next_slot_time(self, direction: Direction | str, after: float) -> float | None:
        """Start of this node's next GTS in ``direction`` at or after ``after``."""
        cells = self.uplink if Direction(direction) is Direction.UP else self.downlink
        return next_slot(cells, self.cfg.timing, after)

    # -- set-up -------------------------------------------------------------------------
    def install_gts(self, cells: list[Gts]) -> None:
        """Take the GTS the coordinator gave this node (statically or by handshake)."""
        self.uplink_gts.cells = sorted(g for g in cells if g.direction is Direction.UP)
        self.downlink = sorted(g for g in cells if g.direction is Direction.DOWN)

    def start(self) -> None:
        """Begin operation: pre-associated (static, as the artifact) or scan and associate."""
        if self.association == "static":
            self.tracker.start_static()
        else:
            self.tracker.scan()

    def _begin_tracking(self) -> None:
        now = self.p.clock.now()
        self.tracking_since = now
        self._release_cap_waiting()
        self.upkeep_strategy.begin(now)
        self.uplink_gts.kick()

    def _resume(self) -> None:
        """Synchronised again after a loss: what waited may go."""
        self.uplink_gts.kick()
        self._release_cap_waiting()

    def _release_cap_waiting(self) -> None:
        while self._cap_waiting:
            self.cap.submit(self._cap_waiting.popleft())

    def toa(self, psdu_bytes: int) -> float:
        """Time on air of a ``psdu_bytes`` frame (cached: a node sends few sizes)."""
        cached = self._toa.get(psdu_bytes)
        if cached is None:
            cached = self._toa[psdu_bytes] = time_on_air(self.p.phy, psdu_bytes)
        return cached

    # -- CAP ----------------------------------------------------------------------------
    def _cap_event(self, kind: str, detail: dict[str, Any]) -> None:
        self._emit(kind, **detail)

    def _cap_finished(self, frame: Frame, status: Status, attempts: int) -> None:
        if frame.kind is FrameKind.ASSOCIATION_REQUEST:
            self.tracker.request_sent(status)
            return
        req = self._cap_requests.pop(id(frame), None)
        if req is not None:
            req.attempts = attempts
            self._finish(req, status)

    # -- medium (Listener protocol) ----------------------------------------------------
    def listening(self, channel: int, sf: int, start: float) -> bool:
        radio = self.p.radio
        if getattr(radio, "listening", None) is not None and radio.listening(channel, sf, start):
            return True
        return self.upkeep_strategy.listening(channel, sf, start)

    def preamble(self, tx: Transmission) -> None:
        if self.p.radio.state is RadioState.RX:
            self.p.radio.preamble(tx)  # type: ignore[attr-defined]

    def deliver(self, tx: Transmission, rssi_dbm: float, margin_db: float) -> None:
        frame = tx.frame
        if frame.kind is FrameKind.BEACON:
            self.tracker.on_beacon()
        elif frame.kind is FrameKind.ACK:
            if not self.uplink_gts.ack.on_ack(frame.seq):
                self.cap.on_ack(frame.seq)
        elif frame.kind is FrameKind.ASSOCIATION_RESPONSE:
            self.tracker.on_response(frame, tx)
        elif frame.kind is FrameKind.DATA:
            self.upkeep_strategy.received(tx)
            if frame.ack_request:
                self._send_ack(frame, tx.channel)
            if self._last_seq.get(frame.src) == frame.seq:
                self._emit("duplicate", src=frame.src)
                return
            self._last_seq[frame.src] = frame.seq
            meta = RxMeta(self.p.clock.now(), rssi_dbm, margin_db, tx.channel, tx.sf)
            self._emit("rx", src=frame.src, bytes=len(frame.payload))
            if self.on_receive is not None:
                self.on_receive(frame.src, frame.payload, meta)

    def _send_ack(self, frame: Frame, channel: int) -> None:
        """Acknowledge ``frame`` a turnaround after it ended, then sleep (a node listens
        only in its windows); skipped when the radio is busy (the sender retries)."""
        ack = Frame(FrameKind.ACK, self.address, frame.src, frame.seq, self.cfg.ack_bytes)
        radio = self.p.radio

        def go() -> None:
            state = radio.state
            if state is RadioState.SLEEP:
                radio.wake()
            elif state in (RadioState.CAD, RadioState.TX):
                self._emit("ack_skipped", src=frame.src)
                return
            self.p.duty.record(channel, self.p.clock.now(), self.ack_s)
            radio.transmit(channel, ack.dst, ack, self.ack_s, radio.sleep)

        self.p.clock.call_later(self.cfg.turnaround_s, go)
