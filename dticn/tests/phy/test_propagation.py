"""Sensitivity and log-distance path loss."""

import numpy as np
import pytest

from dticn.phy.propagation import LogDistancePathLoss, sensitivity_dbm


def test_sensitivity_follows_noise_floor_plus_snr_limit() -> None:
    # -174 + 10 log10(125e3) + 6 - 7.5 = -124.53 dBm; SF12: SNR -20 -> -137.03 dBm.
    assert sensitivity_dbm(7, 125_000) == pytest.approx(-124.53, abs=0.01)
    assert sensitivity_dbm(12, 125_000) == pytest.approx(-137.03, abs=0.01)
    assert sensitivity_dbm(7, 250_000) == pytest.approx(-121.52, abs=0.01)


def test_log_distance_path_loss() -> None:
    pl = LogDistancePathLoss.from_config()
    assert pl.mean_loss_db(40.0) == pytest.approx(127.41)
    assert pl.mean_loss_db(400.0) == pytest.approx(127.41 + 20.8)
    assert pl.mean_loss_db(1.0) == pytest.approx(127.41)          # clamped below d0
    draws = [pl.loss_db(400.0, np.random.default_rng(i)) for i in range(2000)]
    assert np.std(draws) == pytest.approx(3.57, rel=0.1)
