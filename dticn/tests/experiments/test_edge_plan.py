"""`dticn plan --scheme <pull>` (issue 23, item 4): the Interest paths as schemes to choose.
Every candidate runs the NDN edge; reachability is what each MAC's knob buys."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dticn.cli import build_app
from dticn.experiments.edge_plan import (
    EdgeWorkload,
    confirm_edge,
    edge_candidates,
    evaluate_edge,
    plan_edge,
)
from dticn.experiments.params import Experiment
from dticn.radio.planner import Candidate, Workload


def _work(**bounds: float) -> Workload:
    return Workload(nodes=3, interval_s=600.0, duration_s=4 * 3600.0, **bounds)


def _space() -> list[Candidate]:
    return [Candidate("DSME MO5", {"mac": "dsme", "mo": 5}),
            Candidate("DSME MO7", {"mac": "dsme", "mo": 7}),
            Candidate("A 30.72", {"mac": "lorawan-a", "reach_s": 30.72}),
            Candidate("A 122.88", {"mac": "lorawan-a", "reach_s": 122.88}),
            Candidate("B 30.72", {"mac": "lorawan-b", "reach_s": 30.72})]


def test_a_longer_period_buys_lifetime_with_latency_on_every_mac() -> None:
    edge = EdgeWorkload(_work(), "rice-schedule", search_s=2 * 3600.0)
    done = {c.label: c for c in (evaluate_edge(edge, c) for c in _space())}
    assert all(c.refused is None and c.delivery == 1.0 for c in done.values())
    for fast, slow in (("DSME MO5", "DSME MO7"), ("A 30.72", "A 122.88")):
        assert done[slow].lifetime_days > 1.5 * done[fast].lifetime_days
        assert done[slow].latency_p95_s > 2 * done[fast].latency_p95_s
    # class A pays for reachability with keep-alives, class B with listening: B lives longer
    assert done["B 30.72"].lifetime_days > 2 * done["A 30.72"].lifetime_days


def test_the_bound_decides_and_the_full_run_confirms() -> None:
    loose = plan_edge(EdgeWorkload(_work(latency_p95_s=300.0), "rice-schedule",
                                   search_s=2 * 3600.0), _space())
    tight = plan_edge(EdgeWorkload(_work(latency_p95_s=60.0), "rice-schedule",
                                   search_s=2 * 3600.0), _space())
    assert loose.recommended is not None and tight.recommended is not None
    assert loose.recommended.label == "DSME MO7"
    assert tight.recommended.latency_p95_s <= 60.0
    assert tight.recommended.lifetime_days < loose.recommended.lifetime_days
    assert all(c.latency_p95_s <= 60.0 for c in tight.candidates if c.feasible)
    full = confirm_edge(EdgeWorkload(_work(latency_p95_s=300.0), "rice-schedule",
                                     search_s=2 * 3600.0), loose.recommended)
    assert full.lifetime_days == pytest.approx(loose.recommended.lifetime_days, rel=0.05)
    assert full.engine == "events, 4 h"


def test_the_search_space_covers_each_macs_knob() -> None:
    labels = [c.label for c in edge_candidates(sfs=(7,))]
    assert labels[:4] == ["DSME MO5 BO5", "DSME MO6 BO6", "DSME MO7 BO7", "DSME MO8 BO8"]
    assert "LoRaWAN A SF7 keep-alive 245.76 s" in labels
    assert "LoRaWAN B SF7 ping 122.88 s" in labels
    assert not any(label.startswith("LoRaWAN B") and "245.76" in label for label in labels)


@pytest.mark.parametrize(("make", "message"), [
    (lambda: EdgeWorkload(_work(), "push-draft"), "pushes"),
    (lambda: EdgeWorkload(_work(), "rice", search_s=600.0), "under 3 items"),
    (lambda: Experiment(mac="lorawan-b", reach_s=100.0), "2\\^p x 0.96"),
    (lambda: Experiment(mac="dsme", reach_s=30.72), "multisuperframe"),
])
def test_what_cannot_be_planned_is_refused(make, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make()


def test_plan_command_with_a_pulling_scheme(tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    result = CliRunner().invoke(build_app(), [
        "plan", "--nodes", "3", "--interval", "10m", "--latency-p95", "5m",
        "--duration", "4h", "--search", "2h", "--scheme", "rice-schedule",
        "--json", str(out)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    assert doc["scheme"] == "rice-schedule"
    rec = doc["recommended"]
    assert rec["latency_p95_s"] <= 300 and math.isfinite(rec["lifetime_days"])
    assert rec["full_run"]["engine"] == "events, 4 h"
    assert "rice-schedule" in result.output and "search run beside the full run" in " ".join(
        result.output.split())
    assert (tmp_path / "plan.png").exists()
    bad = CliRunner().invoke(build_app(), ["plan", "--scheme", "v9"])
    assert bad.exit_code == 2 and "unknown configuration" in bad.output
