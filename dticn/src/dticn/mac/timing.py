"""DSME superframe structure (IEEE 802.15.4-2015, sections 6.2.1 and 6.2.2 (DSME)).

    slot            = aBaseSlotDuration x 2^SO                 symbols
    superframe (SD) = aBaseSuperframeDuration x 2^SO           (16 slots)
    multisuperframe = aBaseSuperframeDuration x 2^MO           (2^(MO-SO) superframes)
    beacon interval = aBaseSuperframeDuration x 2^BO           (2^(BO-MO) multisuperframes)

Slot 0 of each superframe carries the beacon (sent by the coordinator only at the start
of each beacon interval); slots 1..8 are the CAP, slots 9..15 the seven DSME-GTS. With the
artifact's SO=3, MO=5, BO=5 and the 1 ms LoRa "symbol": slot 480 ms, superframe 7.68 s,
multisuperframe and beacon interval 30.72 s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

A_BASE_SLOT_DURATION = 60          # symbols
A_NUM_SUPERFRAME_SLOTS = 16
A_BASE_SUPERFRAME_DURATION = A_BASE_SLOT_DURATION * A_NUM_SUPERFRAME_SLOTS  # 960 symbols


@dataclass(frozen=True)
class DsmeTiming:
    """The timing of one PAN; all times are seconds from the PAN's first beacon."""

    so: int = 3
    mo: int = 5
    bo: int = 5
    symbol_s: float = 1e-3
    cap_slots: int = 8
    unit_backoff_symbols: int = 20
    cca_symbols: int = 8

    def __post_init__(self) -> None:
        if not 0 <= self.so <= self.mo <= self.bo <= 14:
            raise ValueError(
                f"SO={self.so}, MO={self.mo}, BO={self.bo}: DSME needs 0 <= SO <= MO <= BO <= 14"
            )
        if not 1 <= self.cap_slots <= A_NUM_SUPERFRAME_SLOTS - 2:
            raise ValueError(f"cap_slots={self.cap_slots}: keep 1..14 (slot 0 is the beacon)")

    @property
    def slot_s(self) -> float:
        return A_BASE_SLOT_DURATION * (1 << self.so) * self.symbol_s

    @property
    def superframe_s(self) -> float:
        return A_BASE_SUPERFRAME_DURATION * (1 << self.so) * self.symbol_s

    @property
    def multisuperframe_s(self) -> float:
        return A_BASE_SUPERFRAME_DURATION * (1 << self.mo) * self.symbol_s

    @property
    def beacon_interval_s(self) -> float:
        return A_BASE_SUPERFRAME_DURATION * (1 << self.bo) * self.symbol_s

    @property
    def superframes_per_multisuperframe(self) -> int:
        return 1 << (self.mo - self.so)

    @property
    def gts_per_superframe(self) -> int:
        return A_NUM_SUPERFRAME_SLOTS - 1 - self.cap_slots

    @property
    def first_gts_slot(self) -> int:
        return 1 + self.cap_slots

    @property
    def unit_backoff_s(self) -> float:
        return self.unit_backoff_symbols * self.symbol_s

    @property
    def cca_s(self) -> float:
        return self.cca_symbols * self.symbol_s

    def superframe_start(self, index: int) -> float:
        """Start of superframe number ``index`` counted from time 0."""
        return index * self.superframe_s

    def gts_start(self, multisuperframe: int, superframe: int, gts_index: int) -> float:
        """Start of GTS ``gts_index`` (0..6) of ``superframe`` in ``multisuperframe``."""
        return (multisuperframe * self.multisuperframe_s + superframe * self.superframe_s
                + (self.first_gts_slot + gts_index) * self.slot_s)

    def gts_offset(self, superframe: int, gts_index: int) -> float:
        """Offset of a GTS inside its multisuperframe."""
        return superframe * self.superframe_s + (self.first_gts_slot + gts_index) * self.slot_s

    def cap_window(self, superframe_index: int) -> tuple[float, float]:
        """[start, end) of the CAP of superframe ``superframe_index``."""
        start = self.superframe_start(superframe_index) + self.slot_s
        return start, start + self.cap_slots * self.slot_s

    def in_cap(self, t: float) -> bool:
        """``t`` lies in the CAP of its superframe."""
        cap_start, cap_end = self.cap_window(int(t // self.superframe_s))
        return cap_start <= t < cap_end

    def next_periodic(self, offset: float, period: float, after: float) -> float:
        """First time ``offset + k period`` (k >= 0 integer) that is >= ``after``."""
        k = max(0, math.ceil((after - offset) / period - 1e-9))
        return offset + k * period

    def count_periodic(self, offset: float, period: float, start: float, end: float) -> int:
        """How many ``offset + k period`` fall in ``[start, end)`` (closed-form upkeep)."""
        if end <= start:
            return 0
        first = self.next_periodic(offset, period, start)
        if first >= end:
            return 0
        return math.floor((end - first) / period - 1e-9) + 1

    def cap_advance(self, t: float, periods: int) -> float:
        """Slotted CSMA/CA time: from the first backoff boundary inside a CAP at or after ``t``,
        count ``periods`` unit backoff periods of CAP time (the countdown pauses outside the
        CAP, section 6.2.5.1) and return the boundary reached.
        """
        unit = self.unit_backoff_s
        eps = 1e-9
        index = math.floor(t / self.superframe_s + eps)
        while True:
            cap_start, cap_end = self.cap_window(index)
            here = max(t, cap_start)
            boundary = cap_start + math.ceil((here - cap_start) / unit - eps) * unit
            available = math.floor((cap_end - boundary) / unit + eps)
            if boundary < cap_end - eps and periods < available:
                return boundary + periods * unit
            if boundary < cap_end - eps:
                periods -= max(available, 0)
            index += 1
            t = self.superframe_start(index)

    def cap_countdown(self, t: float, wait_s: float, tail_s: float) -> float:
        """Unslotted CAP time as openDSME counts a backoff (``CAPLayer::
        actionStartBackoffTimer``, inetrg/openDSME de04814): from ``t`` (or from the next CAP's
        start when ``t`` lies outside a CAP's usable part) count ``wait_s`` of usable CAP time
        and return the instant reached, on no boundary. A CAP's usable part ends ``tail_s``
        before its end (their ``symbolsRequired() + PRE_EVENT_SHIFT``: the whole transaction
        fits after it); the count pauses outside it and carries into the next CAP, with no
        fresh draw.
        """
        eps = 1e-9
        index = math.floor(t / self.superframe_s + eps)
        start, end = self.cap_window(index)
        if end - start <= tail_s + 1e-6:
            raise ValueError(f"a transaction of {tail_s:.3f} s never fits in a "
                             f"{end - start:.3f} s CAP")
        left = wait_s
        while True:
            start, end = self.cap_window(index)
            usable_end = end - tail_s
            here = max(t, start)
            if here < usable_end + eps:
                if here + left <= usable_end + eps:
                    return here + left
                left -= usable_end - here
            index += 1
            t = self.superframe_start(index)

    def cap_end_of(self, t: float) -> float:
        """End of the CAP containing ``t`` (``t`` must lie inside a CAP)."""
        return self.cap_window(math.floor(t / self.superframe_s + 1e-9))[1]
