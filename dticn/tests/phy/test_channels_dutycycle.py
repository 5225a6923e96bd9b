"""Channel plan, sub-band mapping and the duty-cycle rules."""

import pytest

from dticn.phy.channels import ChannelPlan
from dticn.phy.dutycycle import DutyCycleTracker


def test_artifact_channel_plan() -> None:
    plan = ChannelPlan.from_config()
    assert plan.count == 16
    assert plan.frequency(0) == pytest.approx(865.1e6)
    assert plan.frequency(15) == pytest.approx(868.1e6)
    assert plan.subband(0).name.startswith("h1.4")
    assert plan.subband(14).duty_cycle == 0.01
    assert plan.subband(15).name.startswith("h1.5")
    with pytest.raises(ValueError, match=r"channels 0\.\.15"):
        plan.frequency(16)


def test_off_time_rule_blocks_until_toa_over_dc() -> None:
    duty = DutyCycleTracker(ChannelPlan.from_config())
    duty.record(0, 10.0, 0.5)                        # 0.5 s at 1% -> free at 10 + 50 s
    assert duty.earliest(0, 11.0) == pytest.approx(60.0)
    assert not duty.allowed(0, 59.9)
    assert duty.allowed(0, 60.0)
    assert duty.allowed(15, 11.0)                    # another sub-band is not affected
    duty.record(0, 30.0, 0.1)                        # sent anyway: a violation is counted
    assert duty.violations == 1
    assert duty.duty_cycle(1000.0)["h1.4 865-868 MHz"] == pytest.approx(0.6 / 1000)


def test_window_rule_allows_bursts_up_to_the_hourly_budget() -> None:
    duty = DutyCycleTracker(ChannelPlan.from_config(), rule="window")
    for i in range(35):                              # 35 s of airtime in the first minute
        duty.record(0, float(i), 1.0)
    assert duty.allowed(0, 40.0)                     # 35 s < 36 s budget
    duty.record(0, 40.0, 1.0)
    assert not duty.allowed(0, 41.0)                 # 36 s used
    assert duty.earliest(0, 41.0) == pytest.approx(3600.0)   # first second expires
    assert duty.violations == 0
