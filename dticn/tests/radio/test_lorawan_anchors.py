"""The LoRaWAN model against its published anchors (pure ALOHA, LoRaSim's experiment 0,
Casals et al.), at test size (the full runs are in
benchmarks/bench_lorawan_anchors.py)."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from dticn.energy.model import EnergyMeter
from dticn.energy.profiles import Activity, load_energy_profile
from dticn.phy.airtime import LoRaParams, time_on_air
from dticn.phy.collision import LoraSimCollision, Overlap
from dticn.phy.propagation import LogDistancePathLoss
from dticn.validation.lorawan_anchors import aloha_point, casals_lifetime, lorasim_point


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


def _frame(sf: int, start: float, rssi: float, length: float = 1.712) -> Overlap:
    return Overlap(sf, start, start + length, rssi)


def test_lorasim_full_rule_spares_preambles_and_captures_at_6_db() -> None:
    rule = LoraSimCollision(125_000.0, full=True)
    t_sym = 4096 / 125_000.0
    # the earlier frame ends inside the first 3 preamble symbols of the later: both live
    other = _frame(12, -1.712 + 2.9 * t_sym, -100.0)
    assert rule.survives(12, 0.0, -100.0, [other], end=1.712)
    other = _frame(12, -1.712 + 3.1 * t_sym, -100.0)
    assert not rule.survives(12, 0.0, -100.0, [other], end=1.712)
    # past the preamble: 6 dB stronger survives, the weaker and anything within 6 dB not
    assert rule.survives(12, 0.0, -94.0, [_frame(12, 0.5, -100.0)], end=1.712)
    assert not rule.survives(12, 0.0, -94.1, [_frame(12, 0.5, -100.0)], end=1.712)
    assert not rule.survives(12, 0.5, -100.0, [_frame(12, 0.0, -94.0)], end=2.212)
    # a later frame that starts within 3 symbols of our end spares us too
    assert rule.survives(12, 0.0, -100.0, [_frame(12, 1.712 - 2.9 * t_sym, -90.0)],
                         end=1.712)
    assert rule.survives(12, 0.0, -100.0, [_frame(11, 0.5, -80.0)], end=1.712)  # other SF
    simple = LoraSimCollision(125_000.0, full=False)
    assert not simple.survives(12, 0.0, -80.0, [_frame(12, 1.7, -120.0)], end=1.712)
    with pytest.raises(ValueError, match="end"):
        rule.survives(12, 0.0, -100.0, [other])


def test_lorasim_experiment_0_matches_lorasim_in_both_modes() -> None:
    """200 nodes (G = 0.34), 10,000 frames: within 2.5 points of LoRaSim 0.2.1's own DER
    (its runs in lorasim_exp0.toml); the full mode's capture is what lifts it."""
    simple = lorasim_point(200, full=False, frames=10_000)
    full = lorasim_point(200, full=True, frames=10_000)
    assert abs(simple.error_points) <= 2.5 and abs(full.error_points) <= 2.5
    assert full.der > simple.der + 0.04
    assert full.lorasim_der == pytest.approx(0.5758, abs=1e-4)
    assert time_on_air(LoRaParams(sf=12, cr=4), 20) == pytest.approx(1.712128)


def test_path_loss_extrapolates_below_d0_only_when_asked() -> None:
    pl = LogDistancePathLoss(127.41, 40.0, 2.08, 0.0)
    assert pl.mean_loss_db(10.0) == pl.mean_loss_db(40.0) == 127.41
    far = replace(pl, extrapolate_below_d0=True)
    assert far.mean_loss_db(10.0) == pytest.approx(127.41 - 20.8 * math.log10(4.0))
    assert far.mean_loss_db(80.0) == pl.mean_loss_db(80.0)
