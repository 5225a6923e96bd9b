"""`dticn plan` and the planner: bounds, refusals, front, and the event-engine check."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dticn.cli import build_app
from dticn.radio.planner import Candidate, Workload, confirm, evaluate, pareto_front, plan

WORK = Workload(nodes=10, interval_s=600.0, latency_p95_s=300.0, delivery=0.99,
                energy_profile="dsme-lora", duration_s=6 * 3600.0)
SMALL = [Candidate("DSME SO3 MO5 BO5", {"so": 3, "mo": 5, "bo": 5}),
         Candidate("DSME SO3 MO7 BO7", {"so": 3, "mo": 7, "bo": 7}),
         Candidate("DSME SO3 MO9 BO9", {"so": 3, "mo": 9, "bo": 9}),
         Candidate("DSME SO3 MO3 BO3", {"so": 3, "mo": 3, "bo": 3}),
         Candidate("LoRaWAN A SF7 unconfirmed", {"mac": "lorawan-a", "sf": 7,
                                                 "confirmed": False})]


def test_plan_recommends_the_longest_lived_config_within_the_bounds() -> None:
    result = plan(WORK, [Candidate(c.label, dict(c.changes)) for c in SMALL])
    by = {c.label: c for c in result.candidates}
    # MO9/BO9: a beacon every 492 s drifts 19.7 ms at 20 ppm, past the 5 ms guard.
    assert "drift" in (by["DSME SO3 MO9 BO9"].refused or "")
    assert "no free uplink GTS" in (by["DSME SO3 MO3 BO3"].refused or "")
    assert by["DSME SO3 MO7 BO7"].lifetime_days > by["DSME SO3 MO5 BO5"].lifetime_days
    assert result.recommended is by["DSME SO3 MO7 BO7"]
    assert by["LoRaWAN A SF7 unconfirmed"].energy_profile == "casals-class-a"
    assert "lives longest" in result.why()
    # The front: LoRaWAN (shortest latency; on Casals' device it outlives DSME-LoRa's node
    # at MO5), then MO7; MO5 is dominated.
    assert [c.label for c in result.front] == ["LoRaWAN A SF7 unconfirmed", "DSME SO3 MO7 BO7"]


def test_a_tight_bound_moves_the_choice_and_an_impossible_one_says_why() -> None:
    tight = Workload(**{**vars(WORK), "latency_p95_s": 60.0})
    result = plan(tight, [Candidate(c.label, dict(c.changes)) for c in SMALL[:2]])
    assert result.recommended is not None and result.recommended.label == "DSME SO3 MO5 BO5"
    assert "MO7 BO7 would live longer" in result.why()
    none = Workload(**{**vars(WORK), "latency_p95_s": 1.0})
    result = plan(none, [Candidate(c.label, dict(c.changes)) for c in SMALL[:2]])
    assert result.recommended is None and "no configuration meets" in result.why()


def test_event_engine_confirms_the_fast_engine_within_5_percent() -> None:
    cand = evaluate(WORK, Candidate("DSME SO3 MO7 BO7", {"so": 3, "mo": 7, "bo": 7}))
    assert cand.engine == "batch"
    check = confirm(WORK, cand)
    assert check.engine == "events"
    assert check.lifetime_days == pytest.approx(cand.lifetime_days, rel=0.05)
    assert check.latency_p95_s == pytest.approx(cand.latency_p95_s, rel=0.05)


def test_pareto_front_drops_dominated_runs() -> None:
    def c(label: str, life: float, p95: float) -> Candidate:
        return Candidate(label, {}, lifetime_days=life, latency_p95_s=p95, delivery=1.0)
    front = pareto_front([c("a", 100, 1), c("b", 90, 5), c("c", 200, 10), c("d", 150, 20)])
    assert [x.label for x in front] == ["a", "c"]


def test_workload_refuses_bad_input() -> None:
    with pytest.raises(ValueError, match="under 3 items"):
        Workload(nodes=1, interval_s=86_400.0, duration_s=86_400.0)
    with pytest.raises(ValueError, match=r"ratio in 0\.\.1"):
        Workload(nodes=1, interval_s=60.0, delivery=99.0)
    assert math.isinf(Workload(nodes=1, interval_s=60.0).latency_p95_s)


def test_plan_command_writes_json_with_the_recommendation(tmp_path: Path) -> None:
    target = tmp_path / "plan.json"
    out = CliRunner().invoke(build_app(), [
        "plan", "--nodes", "10", "--interval", "10m", "--latency-p95", "5m", "--delivery",
        "0.99", "--battery-mah", "2600", "--energy-profile", "dsme-lora", "--duration", "6h",
        "--json", str(target)])
    assert out.exit_code == 0, out.output
    assert "Pareto front" in out.output and "event engine" in out.output
    data = json.loads(target.read_text())
    rec = data["recommended"]
    assert rec["lifetime_days"] > 730 and rec["latency_p95_s"] <= 300
    assert rec["delivery_ratio"] >= 0.99
    assert rec["event_engine"]["lifetime_days"] == pytest.approx(rec["lifetime_days"], rel=0.05)
    assert (tmp_path / "plan.png").stat().st_size > 0
    bad = CliRunner().invoke(build_app(), ["plan", "--interval", "soon"])
    assert bad.exit_code == 2 and "duration" in bad.output
