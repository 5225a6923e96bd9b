"""Energy meter, currents from sx1276.toml, average current and lifetime."""

import pytest

from dticn.energy.model import EnergyConfig, EnergyMeter
from dticn.phy.radio_states import RadioState


def test_defaults_are_the_datasheet_figures() -> None:
    cfg = EnergyConfig.load()
    assert cfg.radio_ma["sleep"] == pytest.approx(0.0002)
    assert cfg.radio_ma["rx"] == pytest.approx(10.8)
    assert cfg.tx_current_ma(13) == pytest.approx(29.0)
    assert cfg.tx_current_ma(20) == pytest.approx(120.0)
    assert cfg.tx_current_ma(15) == pytest.approx(43.5 + (87 - 43.5) / 3)
    with pytest.raises(ValueError, match="add the level"):
        cfg.tx_current_ma(25)


def test_meter_books_live_transitions_and_closed_form_alike() -> None:
    cfg = EnergyConfig.load(mcu_wakeup_overhead_s=0.0)
    live = EnergyMeter(tx_power_dbm=14.0)
    live.transition(RadioState.STANDBY, 10.0)
    live.transition(RadioState.TX, 10.001, 14.0)
    live.transition(RadioState.RX, 10.101)
    live.transition(RadioState.STANDBY, 10.131)
    live.transition(RadioState.SLEEP, 10.131)
    closed = EnergyMeter(tx_power_dbm=14.0)
    closed.add(RadioState.STANDBY, 0.001, count_wakeups=1)
    closed.add(RadioState.TX, 0.1)
    closed.add(RadioState.RX, 0.03)
    a, b = live.report(cfg, 100.0), closed.report(cfg, 100.0)
    assert a.charge_total_mas == pytest.approx(b.charge_total_mas)
    assert a.wakeups == b.wakeups == 1
    # Charge by hand: 1.6*0.001 + 43.5*0.1 + 10.8*0.03 + 0.0002*(100-0.131)
    #                 + MCU 3.0*0.131 + 0.0015*(100-0.131)
    expected = 0.0016 + 4.35 + 0.324 + 0.0002 * 99.869 + 3.0 * 0.131 + 0.0015 * 99.869
    assert a.charge_total_mas == pytest.approx(expected)
    assert a.avg_current_ma == pytest.approx(expected / 100.0)
    assert a.lifetime_days == pytest.approx(2600.0 / (expected / 100.0) / 24.0)
    assert a.energy_per_day_j == pytest.approx(expected / 100.0 * 1e-3 * 3.3 * 86400)


def test_meter_refuses_time_travel() -> None:
    meter = EnergyMeter(since=5.0)
    with pytest.raises(ValueError, match="back in time"):
        meter.transition(RadioState.STANDBY, 4.0)
