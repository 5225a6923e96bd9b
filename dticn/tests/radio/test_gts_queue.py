"""Our reimplementation of DSME-LoRa's Markov model (arXiv 2206.14077, Section 6) gives
their Fig. 23b, Table 8 delays and Table 7 from their equations."""

from __future__ import annotations

import numpy as np
import pytest

from dticn.radio import gts_queue
from dticn.validation.paper import PAPER


@pytest.mark.parametrize(("interval", "mo"), sorted(PAPER["fig23"]))
def test_fig23_mean_delay(interval: int, mo: int) -> None:
    ours = gts_queue.mean_delay_s(0.96 * 2**mo, interval)
    assert round(ours, 2) == pytest.approx(PAPER["fig23"][(interval, mo)], abs=0.011)


def test_table8_delays_at_15_minutes() -> None:
    ours = [round(gts_queue.mean_delay_s(0.96 * 2**mo, 900.0), 2) for mo in range(3, 8)]
    assert ours == [PAPER["table8"][mo][0] for mo in range(3, 8)]


def test_table7_maximum_load() -> None:
    rho = gts_queue.max_utilisation()
    assert rho == pytest.approx(0.856, abs=0.001)          # their 85.6%
    for mo, (model, _sim) in PAPER["table7"].items():
        assert gts_queue.max_load_per_hour(0.96 * 2**mo, rho) == pytest.approx(model, rel=1e-3)


def test_distributions_are_proper_and_mean_matches() -> None:
    rho = 0.6
    pi = gts_queue.stationary(rho)
    lt = gts_queue.queue_length_pmf(rho)
    assert pi.sum() == pytest.approx(1.0) and lt.sum() == pytest.approx(1.0, abs=1e-9)
    assert (pi >= -1e-12).all() and (lt >= -1e-12).all()
    # E[L(t)] = E[L_n] + rho/2 (Eq. 7)
    assert float(np.arange(len(lt)) @ lt) == pytest.approx(
        float(np.arange(len(pi)) @ pi) + rho / 2, rel=1e-6)


def test_unstable_load_is_refused_with_the_fix() -> None:
    with pytest.raises(ValueError, match="0 < lam T < 1"):
        gts_queue.mean_delay_s(61.44, 40.0)
