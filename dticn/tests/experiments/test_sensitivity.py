"""One difference at a time (issue 13, item 1): the variants, the study, the command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dticn.cli import build_app
from dticn.experiments import sensitivity
from dticn.experiments.params import Experiment
from dticn.experiments.runner import run_one
from dticn.experiments.sensitivity import markdown, run_sensitivity, variants
from dticn.profiles import ARTIFACT, MODEL


def test_each_variant_switches_one_difference_and_the_last_is_the_other_profile() -> None:
    chosen = variants("artifact", "model")
    assert chosen[0][1] is ARTIFACT and chosen[-1][1] is MODEL
    switched = [set(p.differences(ARTIFACT)) for _, p in chosen[1:-1]]
    assert switched == [{"allocator"}, {"enforce_duty_cycle"}, {"forward_retransmissions"},
                        {"hint_s"}, {"static_routes"},
                        {"item_payload_bytes", "item_empty_signature"},
                        {"reflexive_lifetime_s"}, {"energy_profile"}, {"cap_rx"}]
    assert set().union(*switched[:-1]) == set(ARTIFACT.differences(MODEL))
    cap = chosen[-2][1]
    assert cap.name == "artifact+cap-rx" and cap.cap_rx and "switched on" in chosen[-2][0]
    assert [p.name for _, p in variants("model", "artifact")][1] == "model+slots"


def test_a_difference_no_row_switches_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    kept = tuple(d for d in sensitivity.DIFFERENCES if d.key != "hint")
    monkeypatch.setattr(sensitivity, "DIFFERENCES", kept)
    with pytest.raises(ValueError, match=r"differ in \['hint_s'\].*add one to DIFFERENCES"):
        variants("artifact", "model")


def test_a_variant_profile_runs_and_names_itself() -> None:
    prof = ARTIFACT.with_(name="artifact+duty-cycle", enforce_duty_cycle=True)
    row = run_one(Experiment(config="rice", seed=1, duration_s=600.0, profile=prof))
    assert row["profile"] == "artifact+duty-cycle"
    assert row["experiment"]["profile"]["enforce_duty_cycle"] is True


def test_study_rows_base_first_and_what_moves() -> None:
    doc = run_sensitivity(configs=["v2-inr", "push"], seeds=1, duration_s=1800.0,
                          bases=["artifact"], workers=1)
    rows = doc["rows"]
    assert len(rows) == 11 * 2 and doc["settings"]["bases"] == ["artifact"]
    by = {(r["variant"], r["config"]): r for r in rows}
    base = run_one(Experiment(config="v2-inr", seed=1, duration_s=1800.0, profile="artifact"))
    assert by[("artifact", "v2-inr")]["success_ratio"] == base["success_ratio"] == 1.0
    assert by[("artifact+retx", "v2-inr")]["changes"] == {"forward_retransmissions": True}
    # NFD forwarding of consumer retransmissions: more LoRa frames per polled item
    assert (by[("artifact+retx", "v2-inr")]["lora_frames_per_item"]
            > by[("artifact", "v2-inr")]["lora_frames_per_item"])
    # the ETSI off-time after the node's MAC ACK blocks its adjacent uplink GTS
    assert by[("artifact+duty-cycle", "v2-inr")]["success_ratio"] < 0.5
    assert by[("artifact+cap-rx", "push")]["lifetime_days"] < 30
    # the measured platform's energy against our optimised model
    assert (by[("artifact+energy", "push")]["lifetime_days"]
            > 3 * by[("artifact", "push")]["lifetime_days"])
    text = markdown(doc, "artifact")
    assert "| ETSI duty-cycle enforcement: as in model |" in text and "**success**" in text


def test_reproduce_sensitivity_writes_json_and_heat_map(tmp_path: Path) -> None:
    out = tmp_path / "sens.json"
    result = CliRunner().invoke(build_app(), [
        "reproduce", "--sensitivity", "--configs", "rice", "--seeds", "1", "--duration",
        "10m", "--workers", "1", "--json", str(out)])
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    assert [r["variant"] for r in doc["rows"]][:2] == ["artifact", "artifact+slots"]
    assert (tmp_path / "sens.png").stat().st_size > 0
    assert "from profile artifact" in result.output
    refused = CliRunner().invoke(build_app(), ["reproduce", "--sensitivity", "--cap-rx"])
    assert refused.exit_code != 0 and "drop --cap-rx" in refused.output
