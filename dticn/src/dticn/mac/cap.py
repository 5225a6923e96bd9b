"""Channel access in the CAP: slotted CSMA/CA with CAD as CCA, ACK wait and retries.

Drives :class:`~dticn.mac.csma.SlottedCsmaCa` in time: backoffs count only CAP time and
are aligned to backoff boundaries from the superframe start; a transmission whose frame,
turnaround and ACK do not fit in the rest of the CAP waits for the start of the next CAP
and applies a further random backoff before its CCA (IEEE 802.15.4-2015, 6.2.5.1, slotted
CSMA-CA: "shall wait until the start of the CAP in the next superframe and apply a further
random backoff delay"; without it every deferred node senses at the same instant). With
``cad_miss_prob`` a CCA on a busy channel reports idle with that probability. The radio
sleeps through backoffs longer than its wake-up time.

``cap_access="opendsme"`` runs the CAP as openDSME's ``CAPLayer`` (inetrg/openDSME
de04814, the one DSME-LoRa's Fig. 22 simulation ran): no backoff boundaries, the backoff
counts only the part of each CAP after which the whole transaction still fits and carries
into the next CAP (:meth:`~dticn.mac.timing.DsmeTiming.cap_countdown`), so no deferral and no
further draw; the frame goes out right after the CCA(s).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from dticn.mac.ack import AckWait
from dticn.mac.csma import AccessFailure, Backoff, Cca, CsmaAction, SlottedCsmaCa, Transmit
from dticn.mac.dsme_config import MacConfig
from dticn.mac.frames import Frame
from dticn.mac.platform import Platform, Status
from dticn.phy.airtime import time_on_air
from dticn.phy.radio_states import RadioState

Finished = Callable[[Frame, Status, int], Any]


class CapAccess:
    """FIFO of frames for the CAP of one MAC instance; one transaction at a time."""

    def __init__(self, platform: Platform, config: MacConfig, on_finished: Finished,
                 on_event: Callable[[str, dict[str, Any]], None] | None = None) -> None:
        self.p = platform
        self.cfg = config
        self.on_finished = on_finished
        self.on_event = on_event or (lambda kind, detail: None)
        self.queue: deque[Frame] = deque()
        self.busy = False
        self._frame: Frame | None = None
        self._csma: SlottedCsmaCa | None = None
        self._retries = 0
        self._transmissions = 0
        self.ack_s = time_on_air(platform.phy, config.ack_bytes)
        wait = config.ack_wait_s
        self.ack = AckWait(platform, 2 * config.turnaround_s + self.ack_s if wait is None
                           else wait)
        self._unslotted = config.cap_access == "opendsme"
        self.backoff_log: list[int] = []
        #: Called instead of sleeping between steps (a node listening through the CAP).
        self.idle_policy: Callable[[], None] | None = None
        self._holding = False
        #: ``on_hold(True)`` when a transaction takes the radio, ``on_hold(False)`` on release.
        self.on_hold: Callable[[bool], None] | None = None

    @property
    def awaiting_ack(self) -> bool:
        """The radio is in RX for this transaction's ACK right now."""
        return self.ack.waiting

    def submit(self, frame: Frame) -> None:
        self.queue.append(frame)
        if not self.busy:
            self._next()

    # -- sequencing ---------------------------------------------------------------
    def _next(self) -> None:
        if not self.queue:
            self.busy = False
            return
        self.busy = True
        self._frame = self.queue.popleft()
        self._retries = 0
        self._transmissions = 0
        self._attempt()

    def _attempt(self) -> None:
        self._csma = SlottedCsmaCa(self.cfg.csma, self.p.rng)
        self._act(self._csma.start())

    def _finish(self, status: Status) -> None:
        frame, self._frame = self._frame, None
        assert frame is not None
        self._radio_sleep()
        self.on_finished(frame, status, self._transmissions)
        self._next()

    def _state(self) -> RadioState:
        return self.p.radio.state

    def _radio_sleep(self) -> None:
        """Release the radio if this transaction holds it: the owner's idle policy (sleep, or
        RX when it listens through the CAP). A radio it does not hold (a beacon window that
        was open when the frame arrived) is left alone."""
        if not self._holding:
            return
        self._holding = False
        if self.on_hold is not None:
            self.on_hold(False)
        if self.idle_policy is not None:
            self.idle_policy()
        elif self._state() is not RadioState.SLEEP:
            self.p.radio.sleep()

    def _hold(self) -> None:
        if self._state() is RadioState.SLEEP:
            self.p.radio.wake()
        if not self._holding and self.on_hold is not None:
            self.on_hold(True)
        self._holding = True

    def _ensure_awake(self) -> None:
        self._hold()
        if self._state() is RadioState.RX:
            self.p.radio.idle()

    def _at(self, when: float, fn: Callable[[], Any]) -> None:
        """Run ``fn`` at ``when`` with the radio awake; release it meanwhile if worth it."""
        now = self.p.clock.now()
        wake = self.cfg.wakeup_s
        if when - now > 2 * wake:
            self._radio_sleep()

            def wake_then() -> None:
                self._hold()
                self.p.clock.call_later(max(when - self.p.clock.now(), 0.0), fn)

            self.p.clock.call_later(when - wake - now, wake_then)
        else:
            self._hold()
            self.p.clock.call_later(max(when - now, 0.0), fn)

    # -- CSMA/CA steps ------------------------------------------------------------
    def _act(self, action: CsmaAction) -> None:
        timing = self.cfg.timing
        now = self.p.clock.now()
        if isinstance(action, Backoff):
            self.backoff_log.append(action.periods)
            if self._unslotted:
                self._at(timing.cap_countdown(now, action.periods * timing.unit_backoff_s,
                                              self._tail_s()), self._cca)
            else:
                self._at(timing.cap_advance(now + self.cfg.wakeup_s, action.periods),
                         self._cca)
        elif isinstance(action, Cca):
            self._at(now if self._unslotted else timing.cap_advance(now, 0), self._cca)
        elif isinstance(action, Transmit):
            self._transmit_at(now if self._unslotted else timing.cap_advance(now, 0))
        elif isinstance(action, AccessFailure):
            self.on_event("channel_access_failure", {"nb": self._csma.nb if self._csma else 0})
            self._finish(Status.CHANNEL_ACCESS_FAILURE)

    def _cca(self) -> None:
        self._ensure_awake()
        self.p.radio.cad(self.cfg.cap_channel, self.cfg.timing.cca_s, self._cca_done)

    def _cca_done(self, idle: bool) -> None:
        assert self._csma is not None
        miss = self.cfg.cad_miss_prob
        if not idle and miss > 0 and self.p.rng.random() < miss:
            self.on_event("cad_miss", {})
            idle = True
        if not idle:
            self.on_event("cca_busy", {})
        self._act(self._csma.on_cca(idle))

    def _transaction_s(self, frame: Frame) -> float:
        toa = time_on_air(self.p.phy, frame.psdu_bytes)
        if frame.ack_request:
            toa += 2 * self.cfg.turnaround_s + self.ack_s
        return toa

    def _tail_s(self) -> float:
        """openDSME's ``symbolsRequired() + PRE_EVENT_SHIFT`` (CAPLayer.cc, dsme_settings.h):
        CCA 8 + the frame's ``getTotalSymbols()`` (2 symbols per byte of PSDU, preamble 4,
        SFD 1, PHY header 1: inetrg/dsme_lora e94c7e5, src/DSMEMessage.cc) + macAckWaitDuration
        + 10 "processing" + 12 symbols of 1 ms (their DSMEPlatform.cc); never less than our
        own CCA and transaction."""
        assert self._frame is not None
        symbol = self.cfg.timing.symbol_s
        theirs = (8 + 2 * (self._frame.psdu_bytes + 6) + 10 + 12) * symbol + self.ack.window_s
        return max(theirs, self.cfg.timing.cca_s + self._transaction_s(self._frame))

    def _transmit_at(self, when: float) -> None:
        assert self._frame is not None and self._csma is not None
        timing = self.cfg.timing
        if self._unslotted:
            self._transmit_unslotted(when)
            return
        if when + self._transaction_s(self._frame) > timing.cap_end_of(when) + 1e-9:
            # Does not fit in this CAP: at the start of the next one, a fresh contention
            # window after a further random backoff (6.2.5.1).
            self._csma.cw = self.cfg.csma.contention_window
            self._csma.done = False
            self.on_event("cap_deferral", {})
            backoff = self._csma.deferral_backoff()
            self.backoff_log.append(backoff.periods)
            nxt = timing.cap_advance(timing.cap_end_of(when) + 1e-6, backoff.periods)
            self._at(nxt, self._cca)
            return
        earliest = self.p.duty.earliest(self.cfg.cap_channel, when)
        if self.p.duty.enforce and earliest > when + 1e-12:
            self.p.duty.deferrals += 1
            self.on_event("duty_cycle_deferral", {"until": earliest})
            self._at(timing.cap_advance(earliest, 0), self._attempt)
            return
        self._at(when, self._send)

    def _transmit_unslotted(self, when: float) -> None:
        """openDSME: the backoff already left room for the transaction; only the duty cycle
        can hold the frame back (then a fresh attempt once it allows)."""
        earliest = self.p.duty.earliest(self.cfg.cap_channel, when)
        if self.p.duty.enforce and earliest > when + 1e-12:
            self.p.duty.deferrals += 1
            self.on_event("duty_cycle_deferral", {"until": earliest})
            self._at(self.cfg.timing.cap_countdown(earliest, 0.0, self._tail_s()),
                     self._attempt)
            return
        self._at(when, self._send)

    def _send(self) -> None:
        frame = self._frame
        assert frame is not None
        self._ensure_awake()
        toa = time_on_air(self.p.phy, frame.psdu_bytes)
        self.p.duty.record(self.cfg.cap_channel, self.p.clock.now(), toa)
        self._transmissions += 1
        self.on_event("tx", {"airtime_s": toa, "slot": "cap", "frame": frame.kind.value})
        self.p.radio.transmit(self.cfg.cap_channel, frame.dst, frame, toa, self._sent)

    def _sent(self) -> None:
        frame = self._frame
        assert frame is not None
        if not frame.ack_request:
            self._finish(Status.DELIVERED)
            return
        self.p.radio.start_rx(self.cfg.cap_channel)
        self.ack.expect(frame.seq, lambda: self._finish(Status.DELIVERED), self._ack_timeout)

    def on_ack(self, seq: int) -> bool:
        """The owner received an ACK; True when it was the one awaited."""
        return self._frame is not None and self.ack.on_ack(seq)

    def _ack_timeout(self) -> None:
        radio = self.p.radio
        self._retries += 1
        self.on_event("retry", {"retries": self._retries})
        if self._retries > self.cfg.csma.max_frame_retries:
            self._finish(Status.NO_ACK)
            return
        if self._state() is not RadioState.SLEEP:
            radio.idle()
        self._attempt()
