"""Slotted CSMA/CA follows IEEE 802.15.4 section 6.2.5.1 (NB, CW, BE)."""

import random

from hypothesis import given
from hypothesis import strategies as st

from dticn.mac.csma import AccessFailure, Backoff, Cca, CsmaParams, SlottedCsmaCa, Transmit

PARAMS = CsmaParams(min_be=3, max_be=5, max_backoffs=4, max_frame_retries=3)


def test_two_idle_ccas_then_transmit() -> None:
    csma = SlottedCsmaCa(PARAMS, random.Random(1))
    first = csma.start()
    assert isinstance(first, Backoff) and 0 <= first.periods <= 7
    assert isinstance(csma.on_cca(True), Cca)          # CW 2 -> 1
    assert isinstance(csma.on_cca(True), Transmit)     # CW 1 -> 0


def test_busy_channel_raises_be_to_max_and_fails_after_max_backoffs() -> None:
    csma = SlottedCsmaCa(PARAMS, random.Random(7))
    csma.start()
    bes = []
    for _ in range(PARAMS.max_backoffs):
        action = csma.on_cca(False)
        assert isinstance(action, Backoff)
        bes.append(csma.be)
        assert 0 <= action.periods <= (1 << csma.be) - 1
    assert bes == [4, 5, 5, 5]                         # BE = min(BE + 1, macMaxBE)
    assert isinstance(csma.on_cca(False), AccessFailure)   # NB = 5 > macMaxCSMABackoffs
    assert csma.nb == 5


def test_busy_resets_contention_window() -> None:
    csma = SlottedCsmaCa(PARAMS, random.Random(3))
    csma.start()
    csma.on_cca(True)                                  # CW 1
    assert isinstance(csma.on_cca(False), Backoff)     # busy: CW back to 2
    assert isinstance(csma.on_cca(True), Cca)
    assert isinstance(csma.on_cca(True), Transmit)


@given(st.lists(st.booleans(), min_size=1, max_size=40), st.integers(0, 2**16))
def test_any_cca_sequence_obeys_the_rules(ccas: list[bool], seed: int) -> None:
    csma = SlottedCsmaCa(PARAMS, random.Random(seed))
    csma.start()
    busy = 0
    for idle in ccas:
        action = csma.on_cca(idle)
        busy += not idle
        if isinstance(action, Backoff):
            assert action.periods < (1 << min(PARAMS.min_be + busy, PARAMS.max_be))
        if isinstance(action, AccessFailure):
            assert busy == PARAMS.max_backoffs + 1
            break
        if isinstance(action, Transmit):
            break
    assert all(0 <= b < 32 for b in csma.backoffs)
