"""Issue 23, item 5: a configuration whose schedule cannot carry its load says so in one
line, with the factor and what can be delivered at most."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from dticn.cli import build_app
from dticn.experiments.params import Experiment
from dticn.experiments.world import schedule_overload
from dticn.radio.capacity import duty_overload, gts_overload
from dticn.radio.scenario import Scenario


def test_overload_is_offered_over_carried() -> None:
    gts = Scenario(nodes=10)
    over = gts_overload(gts, 600.0, 2013.3)
    assert over is not None and over.factor == pytest.approx(3.3555, rel=1e-3)
    assert over.deliverable == pytest.approx(0.298, abs=1e-3)
    assert "3.4x its capacity" in over.line() and "at most 30%" in over.line()
    assert gts_overload(gts, 600.0, 30.72) is None                     # keeps up
    assert gts_overload(gts.with_(slot="cap"), 1.0, 30.72) is None     # no fixed capacity


def test_the_issues_thousand_nodes_say_they_cannot_be_carried() -> None:
    """`dticn radio --nodes 1000 --traffic periodic:600s --mo auto` picks MO 11 for one
    receive chain (one GTS per node every 0.96 s x 2^11 = 1,966 s): it says so before
    running, and the delivery it then measures stays under the bound it printed."""
    out = CliRunner().invoke(build_app(), [
        "radio", "--nodes", "1000", "--duration", "6h", "--traffic", "periodic:600s",
        "--engine", "batch", "--mo", "auto", "--rows", "1"])
    assert out.exit_code == 0, out.output
    lines = [line for line in out.output.splitlines() if "offers more than its schedule" in line]
    assert len(lines) == 1, out.output
    assert "one uplink GTS every 1,966 s (3.3x its capacity)" in lines[0]
    assert "at most 31% of the items" in lines[0]
    [counts] = [line for line in out.output.splitlines() if " items, " in line]
    generated, delivered = (int(w) for w in counts.replace(",", " ").split()[:4:2])
    assert delivered / generated <= 600 / 1966 + 0.01


def test_a_configuration_that_keeps_up_says_nothing() -> None:
    out = CliRunner().invoke(build_app(), [
        "radio", "--nodes", "10", "--duration", "2h", "--traffic", "periodic:600s",
        "--engine", "batch", "--rows", "1"])
    assert out.exit_code == 0, out.output
    assert "offers more than its schedule" not in out.output


def test_a_sweep_point_its_schedule_cannot_carry_is_named() -> None:
    assert schedule_overload(Experiment(nodes=3, interval_s=(50.0, 70.0))) is None
    over = schedule_overload(Experiment(nodes=300, interval_s=(50.0, 70.0)))
    assert over is not None and over.factor > 1


def test_lorawan_at_sf12_says_its_duty_cycle_cannot_carry_the_items() -> None:
    """A 40-byte item a minute at SF12 is 2.47 s on air (4.1%), where the eight uplink
    channels' two 1% sub-bands allow 2%: one line before running, and the delivery the run
    then measures stays under the bound it printed."""
    args = ["radio", "--mac", "lorawan-a", "--nodes", "5", "--duration", "2h",
            "--traffic", "periodic:60s", "--payload", "40", "--rows", "1"]
    out = CliRunner().invoke(build_app(), [*args, "--sf", "12"], env={"COLUMNS": "300"})
    assert out.exit_code == 0, out.output
    lines = [line for line in out.output.splitlines() if "duty cycle allows" in line]
    assert len(lines) == 1, out.output
    assert "allow 2.0% (2.1x)" in lines[0] and "at most 49% of the items" in lines[0]
    [counts] = [line for line in out.output.splitlines() if " items, " in line]
    generated, delivered = (int(w) for w in counts.replace(",", " ").split()[:4:2])
    assert delivered / generated <= 0.49 + 0.01
    fast = CliRunner().invoke(build_app(), [*args, "--sf", "7"], env={"COLUMNS": "300"})
    assert fast.exit_code == 0 and "duty cycle allows" not in fast.output


def test_duty_overload_needs_an_enforced_duty_cycle() -> None:
    slow = Scenario(nodes=1, mac="lorawan-a", sf=12, payload_bytes=40, channels=3)
    over = duty_overload(slow, 60.0)
    assert over is not None and over.allowed_share == pytest.approx(0.01)   # one sub-band
    assert duty_overload(slow.with_(enforce_duty_cycle=False), 60.0) is None
    assert duty_overload(slow, 600.0) is None


def test_a_reachable_class_a_node_at_sf12_says_its_keepalives_exceed_the_duty_cycle() -> None:
    """A class A node that answers Interests sends an empty uplink (13 B, 1.16 s at SF12)
    whenever it sent nothing for 30.72 s: 3.8% of the time, where its sub-bands allow 2%.
    The sweep names the point before running; a push node (only its items go up) and a
    longer keep-alive period say nothing."""
    args = ["sweep", "--configs", "rice-schedule,push-draft", "--nodes", "1",
            "--mac", "lorawan-a", "--seeds", "1", "--duration", "10m", "--workers", "1"]
    out = CliRunner().invoke(build_app(), [*args, "--sf", "12"], env={"COLUMNS": "300"})
    assert out.exit_code == 0, out.output
    lines = [line for line in out.output.splitlines() if "duty cycle allows" in line]
    assert len(lines) == 1 and "config rice-schedule" in lines[0], out.output
    assert "1.16 s on air every 31 s" in lines[0] and "(1.9x)" in lines[0]
    assert "longer keep-alive period" in lines[0]
    assert schedule_overload(Experiment(config="rice-schedule", mac="lorawan-a", sf=12,
                                        reach_s=122.88)) is None
    assert schedule_overload(Experiment(config="rice-schedule", mac="lorawan-b",
                                        sf=12)) is None
