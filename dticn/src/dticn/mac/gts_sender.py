"""The GTS transmit path of both ends: a device's uplink and the coordinator's downlink.

Both serve a queue of requests in the owner's own GTS: the head is sent at the start of the
next slot, its ACK is awaited (:class:`~dticn.mac.ack.AckWait`), a missing ACK sends it again
in a later slot (same frame, same sequence number) until macMaxFrameRetries
(IEEE 802.15.4-2015, 6.7.4.3), and the duty cycle may push an attempt to a later slot.
:class:`GtsQueue` is that shared part; :class:`UplinkGts` (a battery node: wakes before its
slot, sleeps after) and :class:`DownlinkGts` (the mains-powered coordinator: one queue per
node, listening by schedule) are what differs.

What goes on the wire: one data frame per attempt on the cell's channel, an Imm-Ack back.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator

from dticn.clock import TimerHandle
from dticn.mac.ack import AckWait
from dticn.mac.dsme_config import MacConfig
from dticn.mac.frames import Frame
from dticn.mac.gts import Direction, Gts, GtsTable, cell_at, next_slot
from dticn.mac.platform import MacRequest, Platform, Status

Emit = Callable[..., None]
"""``emit(kind, request, **detail)``: the owner's observer events."""


class GtsQueue:
    """Requests waiting for one owner's GTS, served head first (see module docstring).

    The owner hands in how it builds a data frame (its sequence numbers), how it reports
    events and how it finishes a request, so both ends number and report alike.
    """

    def __init__(self, platform: Platform, config: MacConfig, *,
                 toa: Callable[[int], float], build_frame: Callable[[MacRequest], Frame],
                 emit: Emit, finish: Callable[[MacRequest, Status], None]) -> None:
        self.p = platform
        self.max_retries = config.csma.max_frame_retries
        self.requests: deque[MacRequest] = deque()
        self._toa = toa
        self._build_frame = build_frame
        self._emit = emit
        self._finish = finish
        self._frame: Frame | None = None    # the head's frame, kept for its retransmissions

    def __len__(self) -> int:
        return len(self.requests)

    def __iter__(self) -> Iterator[MacRequest]:
        return iter(self.requests)

    def append(self, req: MacRequest) -> None:
        self.requests.append(req)

    @property
    def head(self) -> MacRequest:
        return self.requests[0]

    def deferred(self, channel: int) -> bool:
        """The duty cycle forbids sending now on ``channel``: counted and reported."""
        now = self.p.clock.now()
        duty = self.p.duty
        if duty.allowed(channel, now):
            return False
        duty.deferrals += 1
        self._emit("duty_cycle_deferral", self.head, until=duty.earliest(channel, now))
        return True

    def attempt(self, channel: int) -> tuple[Frame, float]:
        """Book one transmission of the head on ``channel`` now: its frame and airtime."""
        req = self.head
        if self._frame is None:   # retransmissions reuse the frame and its sequence number
            self._frame = self._build_frame(req)
        toa = self._toa(self._frame.psdu_bytes)
        self.p.duty.record(channel, self.p.clock.now(), toa)
        req.attempts += 1
        self._emit("tx", req, airtime_s=toa, slot="gts", attempt=req.attempts)
        return self._frame, toa

    def acknowledged(self) -> None:
        """The head's ACK arrived: it is delivered."""
        self._done(Status.DELIVERED)

    def unacknowledged(self) -> None:
        """No ACK for the head: give up after macMaxFrameRetries retries, else retry later."""
        req = self.head
        if req.attempts > self.max_retries:
            self._done(Status.NO_ACK)
        else:
            self._emit("retry", req, retries=req.attempts)

    def _done(self, status: Status) -> None:
        self._frame = None
        self._finish(self.requests.popleft(), status)


class UplinkGts:
    """A device's uplink: wake before its next own GTS, send the head, wait for the ACK,
    sleep; one transmission in flight at a time."""

    def __init__(self, platform: Platform, config: MacConfig, queue: GtsQueue, *,
                 ack_s: float, ready: Callable[[], bool], take_radio: Callable[[], bool]
                 ) -> None:
        """``ready()``: the node tracks beacons (it may use its slots); ``take_radio()``:
        get the radio to standby for a slot, False while it is busy."""
        self.p = platform
        self.cfg = config
        self.queue = queue
        self.cells: list[Gts] = []
        self.ack = AckWait(platform, 2 * config.turnaround_s + ack_s)
        self._ready = ready
        self._take_radio = take_radio
        self._wake: TimerHandle | None = None
        self._inflight: Frame | None = None

    def next_slot_time(self, after: float) -> float | None:
        return next_slot(self.cells, self.cfg.timing, after)

    def kick(self) -> None:
        """Plan the wake-up for the next slot, unless one is planned or nothing can go."""
        if (not self.queue or self._wake is not None or self._inflight is not None
                or not self._ready() or not self.cells):
            return
        now = self.p.clock.now()
        after = now + self.cfg.wakeup_s
        # Do not wake for a slot the duty-cycle off-time forbids anyway.
        after = max(after, self.p.duty.earliest(self.cells[0].channel, after))
        when = self.next_slot_time(after)
        assert when is not None
        cell = cell_at(self.cells, self.cfg.timing, when)
        self._wake = self.p.clock.call_later(when - self.cfg.wakeup_s - now, self._woken, cell)

    def _woken(self, cell: Gts) -> None:
        self._wake = None
        if not self._ready() or not self._take_radio():
            self.p.clock.call_later(self.cfg.timing.slot_s, self.kick)
            return
        self.p.clock.call_later(self.cfg.wakeup_s, self._send, cell)

    def _send(self, cell: Gts) -> None:
        if self.queue.deferred(cell.channel):
            self.p.radio.sleep()
            self.kick()
            return
        frame, toa = self.queue.attempt(cell.channel)
        self._inflight = frame
        self.p.radio.transmit(cell.channel, frame.dst, frame, toa, lambda: self._sent(cell))

    def _sent(self, cell: Gts) -> None:
        assert self._inflight is not None
        frame = self._inflight
        if not frame.ack_request:
            self._acked()
            return
        self.p.radio.start_rx(cell.channel)
        self.ack.expect(frame.seq, self._acked, self._missed)

    def _acked(self) -> None:
        self._settle(self.queue.acknowledged)

    def _missed(self) -> None:
        self._settle(self.queue.unacknowledged)

    def _settle(self, outcome: Callable[[], None]) -> None:
        self._inflight = None
        self.p.radio.sleep()
        outcome()
        self.kick()


class DownlinkGts:
    """The coordinator's downlink: one :class:`GtsQueue` and one ACK wait per node.

    The coordinator listens by schedule, not after its own frame, so the ACK window is
    opened with the frame and counts its airtime in.
    """

    def __init__(self, platform: Platform, config: MacConfig, table: GtsTable, *,
                 ack_s: float, new_queue: Callable[[], GtsQueue]) -> None:
        self.p = platform
        self.cfg = config
        self.table = table
        self.ack_s = ack_s
        self.queues: dict[int, GtsQueue] = {}
        self._new_queue = new_queue
        self._busy: set[int] = set()
        self._acks: dict[int, AckWait] = {}
        #: Nodes whose frame is on air or waits for its ACK (their cell is listened to).
        self.inflight: set[int] = set()

    def submit(self, node: int, req: MacRequest) -> None:
        queue = self.queues.get(node)
        if queue is None:
            queue = self.queues[node] = self._new_queue()
        queue.append(req)
        self.kick(node)

    def kick(self, node: int) -> None:
        if node in self._busy or not self.queues.get(node):
            return
        self._busy.add(node)
        now = self.p.clock.now()
        cells = self.table.of(node, Direction.DOWN)
        when = next_slot(cells, self.cfg.timing, now + self.cfg.turnaround_s)
        assert when is not None
        cell = cell_at(cells, self.cfg.timing, when)
        self.p.clock.call_later(when + self.cfg.turnaround_s - now, self._send, node, cell)

    def _send(self, node: int, cell: Gts) -> None:
        queue = self.queues[node]
        if queue.deferred(cell.channel):
            self._busy.discard(node)
            self.p.clock.call_later(self.cfg.timing.slot_s, self.kick, node)
            return
        frame, toa = queue.attempt(cell.channel)
        ack = self._acks.get(node)
        if ack is None:
            ack = self._acks[node] = AckWait(self.p, 2 * self.cfg.turnaround_s + self.ack_s)
        ack.expect(frame.seq, lambda: self._settle(node, queue.acknowledged),
                   lambda: self._settle(node, queue.unacknowledged),
                   after_s=toa + 2 * self.cfg.turnaround_s + self.ack_s)
        self.inflight.add(node)
        self.p.radio.transmit(cell.channel, node, frame, toa, _nothing)

    def on_ack(self, node: int, seq: int) -> bool:
        """An ACK from ``node``; True when it is the one its downlink frame awaits."""
        ack = self._acks.get(node)
        return ack is not None and ack.on_ack(seq)

    def _settle(self, node: int, outcome: Callable[[], None]) -> None:
        self.inflight.discard(node)
        self._busy.discard(node)
        outcome()
        self.kick(node)


def _nothing() -> None:
    """The coordinator's radio needs nothing done when a frame ends."""
