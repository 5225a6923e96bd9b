"""DSME superframe structure with the artifact's settings, and CAP backoff arithmetic."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dticn.mac.dsme_config import MacConfig
from dticn.mac.timing import DsmeTiming


def test_artifact_timings_match_the_spec() -> None:
    t = MacConfig.load().timing
    assert (t.so, t.mo, t.bo) == (3, 5, 5)
    assert t.slot_s == pytest.approx(0.480)
    assert t.superframe_s == pytest.approx(7.68)
    assert t.multisuperframe_s == pytest.approx(30.72)
    assert t.beacon_interval_s == pytest.approx(30.72)
    assert t.superframes_per_multisuperframe == 4
    assert t.gts_per_superframe == 7
    assert t.cap_window(0) == pytest.approx((0.48, 0.48 + 8 * 0.48))
    assert t.gts_start(1, 2, 3) == pytest.approx(30.72 + 2 * 7.68 + 12 * 0.48)
    assert t.unit_backoff_s == pytest.approx(0.020)


def test_orders_are_validated() -> None:
    with pytest.raises(ValueError, match="SO <= MO <= BO"):
        DsmeTiming(so=4, mo=3, bo=5)


def test_cap_backoff_pauses_outside_the_cap() -> None:
    t = DsmeTiming()
    assert t.cap_advance(0.0, 0) == pytest.approx(0.48)          # first CAP boundary
    assert t.cap_advance(0.49, 1) == pytest.approx(0.52)         # aligned, then one period
    # At 4.30 s one period is left in the CAP (ends 4.32 s); two more resume in the next CAP.
    assert t.cap_advance(4.30, 2) == pytest.approx(7.68 + 0.48 + 0.02)


@given(offset_ms=st.integers(0, 30_000), period_ms=st.integers(500, 40_000),
       start_ms=st.integers(0, 500_000), length_ms=st.integers(0, 500_000))
def test_count_periodic_matches_enumeration(offset_ms: int, period_ms: int, start_ms: int,
                                            length_ms: int) -> None:
    # Whole milliseconds keep the edges exact; the brute force counts in integers.
    end_ms = start_ms + length_ms
    brute = sum(1 for k in range(0, 2000) if start_ms <= offset_ms + k * period_ms < end_ms)
    t = DsmeTiming()
    assert t.count_periodic(offset_ms / 1e3, period_ms / 1e3, start_ms / 1e3,
                            end_ms / 1e3) == brute
    first = t.next_periodic(offset_ms / 1e3, period_ms / 1e3, start_ms / 1e3)
    assert first >= start_ms / 1e3 - 1e-9
    assert first == offset_ms / 1e3 or first - period_ms / 1e3 < start_ms / 1e3


def test_in_cap_is_slots_one_to_cap_slots_of_every_superframe() -> None:
    t = DsmeTiming()
    for index in (0, 5):
        start, end = t.cap_window(index)
        assert start == t.superframe_start(index) + t.slot_s
        assert end == start + t.cap_slots * t.slot_s
        assert t.in_cap(start) and t.in_cap(end - 1e-6)
        assert not t.in_cap(start - 1e-6) and not t.in_cap(end)
