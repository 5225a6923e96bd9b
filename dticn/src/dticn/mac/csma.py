"""Slotted CSMA/CA of the CAP (IEEE 802.15.4-2015, section 6.2.5.1, figure 6-3).

A sans-IO state machine: it says what to do next (wait ``n`` backoff periods then CCA,
transmit, or give up) and is told what the CCA saw. Time and randomness come from the
caller; the same object runs in the simulator and on hardware.

    NB = 0, CW = 2, BE = macMinBE
    loop: wait random(0 .. 2^BE - 1) unit backoff periods, then CCA on backoff boundaries
      idle:  CW -= 1; CW == 0 -> transmit; else CCA again at the next boundary
      busy:  CW = 2; NB += 1; BE = min(BE + 1, macMaxBE); NB > macMaxCSMABackoffs -> fail
Retries (section 6.7.4.3): a frame without its ACK is sent again through a fresh CSMA/CA,
at most macMaxFrameRetries times.
"""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True)
class CsmaParams:
    """macMinBE, macMaxBE, macMaxCSMABackoffs, macMaxFrameRetries (spec defaults 3/5/4/3).

    ``contention_window``: idle CCAs needed before transmitting (slotted: 2; openDSME's
    CAPLayer transmits after one). ``backoff_offset``: unit periods added to every draw
    (openDSME's CAPLayer waits ``aUnitBackoffPeriod * (random(0 .. 2^BE - 1) + 1)``, "+1 to
    avoid scheduling in the past"; the standard adds none).
    """

    min_be: int = 3
    max_be: int = 5
    max_backoffs: int = 4
    max_frame_retries: int = 3
    contention_window: int = 2
    backoff_offset: int = 0

    def __post_init__(self) -> None:
        if not 0 <= self.min_be <= self.max_be <= 8:
            raise ValueError(f"need 0 <= macMinBE ({self.min_be}) <= macMaxBE ({self.max_be}) <= 8")
        if not 0 <= self.max_backoffs <= 5:
            raise ValueError(f"macMaxCSMABackoffs={self.max_backoffs}: the standard allows 0..5")
        if not 0 <= self.max_frame_retries <= 7:
            raise ValueError(f"macMaxFrameRetries={self.max_frame_retries}: allowed 0..7")
        if self.contention_window < 1 or self.backoff_offset < 0:
            raise ValueError(f"need contention_window >= 1 ({self.contention_window}) and "
                             f"backoff_offset >= 0 ({self.backoff_offset})")


@dataclass(frozen=True)
class Backoff:
    """Wait ``periods`` unit backoff periods, then perform a CCA."""

    periods: int


@dataclass(frozen=True)
class Cca:
    """Perform the next CCA at the next backoff boundary (contention window not done)."""


@dataclass(frozen=True)
class Transmit:
    """Channel found idle CW times: transmit now."""


@dataclass(frozen=True)
class AccessFailure:
    """NB exceeded macMaxCSMABackoffs: CHANNEL_ACCESS_FAILURE."""


CsmaAction = Backoff | Cca | Transmit | AccessFailure


class SlottedCsmaCa:
    """One channel-access attempt for one frame (create a new one per retry)."""

    def __init__(self, params: CsmaParams, rng: random.Random) -> None:
        self.params = params
        self._rng = rng
        self.nb = 0
        self.be = params.min_be
        self.cw = params.contention_window
        self.backoffs: list[int] = []
        self.done = False

    def start(self) -> CsmaAction:
        """First step: a random backoff with BE = macMinBE."""
        return self._backoff()

    def _backoff(self) -> Backoff:
        periods = self._rng.randint(0, (1 << self.be) - 1) + self.params.backoff_offset
        self.backoffs.append(periods)
        return Backoff(periods)

    def deferral_backoff(self) -> Backoff:
        """The further random backoff (current BE; NB unchanged) after the transaction did
        not fit in the rest of the CAP and waits for the next one (6.2.5.1)."""
        return self._backoff()

    def on_cca(self, idle: bool) -> CsmaAction:
        """Next step after a CCA that found the channel ``idle`` (or busy)."""
        if self.done:
            raise RuntimeError("CSMA/CA attempt already finished; start a new one per frame")
        if idle:
            self.cw -= 1
            if self.cw == 0:
                self.done = True
                return Transmit()
            return Cca()
        self.cw = self.params.contention_window
        self.nb += 1
        self.be = min(self.be + 1, self.params.max_be)
        if self.nb > self.params.max_backoffs:
            self.done = True
            return AccessFailure()
        return self._backoff()
