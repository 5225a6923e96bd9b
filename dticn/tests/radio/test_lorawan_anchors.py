"""The LoRaWAN model against its published anchors, at test size (the full runs are in
benchmarks/bench_lorawan_anchors.py)."""

from __future__ import annotations

import math

import pytest

from dticn.energy.model import EnergyMeter
from dticn.energy.profiles import Activity, load_energy_profile
from dticn.validation.lorawan_anchors import aloha_point, casals_lifetime


@pytest.mark.parametrize("g", [0.2, 0.8])
def test_pure_aloha_delivery_is_e_to_the_minus_2g(g: float) -> None:
    point = aloha_point(g, nodes=round(g * 1000), frames=3000)
    assert point.frames > 2500
    assert abs(point.measured_g - g) < 0.05
    # Within three standard errors (and half a point of model slack) of e^(-2G).
    assert abs(point.delivery - math.exp(-2 * point.measured_g)) < 1.5 * point.ci95 + 0.005


def test_casals_one_message_every_five_minutes_lasts_about_a_year() -> None:
    point = casals_lifetime(300.0, days=2.0)
    assert point.error is not None and abs(point.error) <= 0.15
    daily = casals_lifetime(86_400.0, days=10.0)
    assert daily.lifetime_years == pytest.approx(6.0, rel=0.05)


def test_class_a_profile_prices_each_step() -> None:
    profile = load_energy_profile("casals-class-a", battery_mah=2400.0)
    idle = profile.report(EnergyMeter(), Activity(horizon_s=3600.0, tracking_s=3600.0,
                                                  beacons=0, superframes=0))
    assert idle.avg_current_ma == pytest.approx(0.045)
    one = profile.report(EnergyMeter(), Activity(
        horizon_s=3600.0, tracking_s=3600.0, beacons=0, superframes=0, uplinks=1,
        uplink_tx_s=0.05, rx_window_s=0.2, rx_wait_s=1.8))
    fixed = 0.1682 * 22.1 + 0.0838 * 13.3 + 0.147 * 13.0 + 0.268 * 21.0 + 0.038 * 13.0
    extra = fixed + 0.05 * 83.0 + 0.2 * 38.0 + 1.8 * 27.0
    active = 0.1682 + 0.0838 + 0.147 + 0.268 + 0.038 + 2.05
    assert one.charge_total_mas == pytest.approx(extra + (3600.0 - active) * 0.045)
