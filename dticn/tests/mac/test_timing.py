"""DSME superframe structure with the artifact's settings, and CAP backoff arithmetic."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dticn.mac.config import MacConfig
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


@given(offset=st.floats(0, 30), period=st.floats(0.5, 40), start=st.floats(0, 500),
       length=st.floats(0, 500))
def test_count_periodic_matches_enumeration(offset: float, period: float, start: float,
                                            length: float) -> None:
    t = DsmeTiming()
    end = start + length
    brute = sum(1 for k in range(2000) if start <= offset + k * period < end)
    assert abs(t.count_periodic(offset, period, start, end) - brute) <= 0 or any(
        abs(offset + k * period - edge) < 1e-6 for k in range(2000) for edge in (start, end))
