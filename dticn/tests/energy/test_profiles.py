"""Energy profiles (issue 16): the measured DSME-LoRa profile reproduces their Table 5 S2 and
Table 8 from the per-event costs of their Table 4; every report names its profile."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dticn.cli import build_app
from dticn.energy.model import EnergyMeter
from dticn.energy.profiles import (
    ENERGY_PROFILES,
    Activity,
    MeasuredProfile,
    load_energy_profile,
)
from dticn.radio.engines import run
from dticn.radio.scenario import Scenario

#: DSME-LoRa Table 8 (GTS sender, SO 3, BO 7, one frame per 15 min, 2800 mAh, 90% regulator):
#: MO -> (power mW, lifetime years).
TABLE8 = {3: (0.58, 1.82), 4: (0.47, 2.24), 5: (0.42, 2.53), 6: (0.39, 2.71), 7: (0.38, 2.81)}
YEAR_DAYS = 365.25


def test_registry_and_unknown_profile() -> None:
    assert set(ENERGY_PROFILES) == {"optimised", "dsme-lora", "casals-class-a"}
    with pytest.raises(ValueError, match="known: optimised, dsme-lora, casals-class-a"):
        load_energy_profile("nope")
    with pytest.raises(ValueError, match="energy_profile='nope'"):
        Scenario(energy_profile="nope")


def test_table5_s2_gts_sender_per_beacon_interval() -> None:
    """S2: SO 3, MO 3, BO 4 (15.36 s: two superframes, one TX GTS each). Their CFP-active
    16.91 mJ is 1.50 x the 11.27 mJ of one GTS transmission, so 1.5 frames per interval."""
    prof = load_energy_profile("dsme-lora")
    assert isinstance(prof, MeasuredProfile)
    intervals = 200
    activity = Activity(horizon_s=15.36 * intervals, tracking_s=15.36 * intervals,
                        beacons=intervals, superframes=2 * intervals,
                        tx_gts_slots=2 * intervals, gts_tx=3 * intervals // 2)
    parts = {k: v / intervals for k, v in prof.energy_mj(activity).items()}
    assert parts["beacon_rx"] + parts["beacon_slot_inactive"] == pytest.approx(18.36)
    assert parts["cap"] == pytest.approx(0.99, abs=0.011)        # printed 0.50 per CAP
    assert parts["cfp"] == pytest.approx(4.40)
    assert parts["gts_tx"] == pytest.approx(16.91, abs=0.005)
    assert sum(parts.values()) == pytest.approx(40.66, abs=0.02)
    report = prof.report(EnergyMeter(), activity)
    # power drawn through the regulator, back at the board: the same 40.66 mJ per interval
    assert report.power_mw * prof.regulator_efficiency * 15.36 == pytest.approx(40.66, abs=0.02)
    assert report.profile == "dsme-lora" and report.as_dict()["events"]["beacons"] == intervals


def test_table5_s2_in_the_simulator() -> None:
    """The same from a simulated GTS sender (one frame every 10.24 s: 1.5 per interval)."""
    s = Scenario(nodes=1, duration_s=15.36 * 200, traffic="periodic:10.24s", so=3, mo=3, bo=4,
                 radius_m=10, energy_profile="dsme-lora")
    e = run(s).nodes[0].energy
    assert e is not None
    assert e.power_mw * 0.9 * 15.36 == pytest.approx(40.66, rel=0.01)


@pytest.mark.parametrize("mo", sorted(TABLE8))
def test_table8_power_and_lifetime(mo: int) -> None:
    """Within 2% of their printed power and lifetime (they print two or three digits)."""
    s = Scenario(nodes=1, duration_s=128 * 900.0, traffic="periodic:900s", so=3, mo=mo, bo=7,
                 battery_mah=2800, radius_m=10, energy_profile="dsme-lora")
    result = run(s)
    e = result.nodes[0].energy
    assert e is not None and e.profile == "dsme-lora"
    power, years = TABLE8[mo]
    assert e.power_mw == pytest.approx(power, rel=0.02)
    assert e.lifetime_days / YEAR_DAYS == pytest.approx(years, rel=0.02)
    summary = result.summary()
    assert summary["energy_profile"] == "dsme-lora"
    assert summary["power_mw_mean"] == pytest.approx(e.power_mw)


def test_optimised_is_the_state_time_model_and_much_cheaper() -> None:
    s = Scenario(nodes=1, duration_s=128 * 900.0, traffic="periodic:900s", so=3, mo=3, bo=7,
                 battery_mah=2800, radius_m=10)
    e = run(s).nodes[0].energy
    assert e is not None and e.profile == "optimised" and e.events is None
    assert e.power_mw < TABLE8[3][0] / 5


def test_event_engine_counts_the_same_activity_as_the_batch_engine() -> None:
    s = Scenario(nodes=2, duration_s=4 * 3600.0, traffic="periodic:120s", radius_m=10,
                 energy_profile="dsme-lora")
    batch = run(s.with_(engine="batch")).nodes
    events = run(s.with_(engine="events")).nodes
    for b, v in zip(batch, events, strict=True):
        assert b.energy is not None and v.energy is not None
        assert b.energy.events == v.energy.events
        assert v.energy.power_mw == pytest.approx(b.energy.power_mw, rel=1e-9)


def test_radio_command_takes_bo_and_energy_profile(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = CliRunner().invoke(build_app(), [
        "radio", "--nodes", "1", "--duration", "2h", "--traffic", "periodic:900s", "--mo", "3",
        "--bo", "7", "--energy-profile", "dsme-lora", "--radius", "10", "--json", str(out)])
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    assert doc["scenario"]["bo"] == 7 and doc["scenario"]["mo"] == 3
    assert doc["summary"]["energy_profile"] == "dsme-lora"
    assert doc["nodes"][0]["energy"]["profile"] == "dsme-lora"
    assert doc["summary"]["power_mw_mean"] > 0.5
    assert "energy profile dsme-lora" in result.output
    refused = CliRunner().invoke(build_app(), ["radio", "--mo", "5", "--bo", "4"])
    assert refused.exit_code != 0 and "BO >= MO" in refused.output
