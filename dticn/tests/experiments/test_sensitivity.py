"""One difference at a time (issue 13, item 1): the variants, the study, the command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dticn.cli import build_app
from dticn.edge_profiles import ARTIFACT, MODEL
from dticn.experiments import sensitivity
from dticn.experiments.params import Experiment
from dticn.experiments.runner import run_one
from dticn.experiments.sensitivity import markdown, run_sensitivity, variants


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


REPORT = Path(__file__).parents[2] / "benchmarks" / "results" / "dticn-sensitivity.json"


def _docs_rows(text: str) -> dict[str, list[str]]:
    """The body rows of a rendered table, by their first cell."""
    lines = [ln for ln in text.splitlines() if ln.startswith("| ") and "---" not in ln]
    return {cells[0]: cells[1:] for cells in
            (ln.strip("| ").split(" | ") for ln in lines[1:])}


def test_docs_table_renders_the_committed_report_cell_for_cell() -> None:
    doc = json.loads(REPORT.read_text())
    by = {(r["base"], r["variant"], r["config"]): r for r in doc["rows"]}
    rows = _docs_rows(sensitivity.docs_table(doc, "artifact"))
    base = by[("artifact", "artifact", "v2-inr")]
    success, p50, frames, energy, lifetime = rows[base["title"]]
    assert success.split(" / ")[0] == f"{base['success_ratio']:.2f}"
    assert p50.split(" / ")[2] == f"{by[('artifact', 'artifact', 'rice')]['latency_p50_s']:.1f}"
    assert frames.split(" / ")[0] == (
        f"{by[('artifact', 'artifact', 'v1-inr')]['lora_frames_per_item']:.2f}")
    assert energy == base["energy_profile"]
    push = by[("artifact", "artifact", "push")]
    assert lifetime.split(" / ")[2] == f"{push['lifetime_days']:.0f}"
    # every row names the energy profile its lifetimes are under; the energy row switches it
    for (b, _, _), r in by.items():
        if b == "artifact":
            assert rows[r["title"]][3] == r["energy_profile"]
    switched = by[("artifact", "artifact+energy", "push")]
    assert rows[switched["title"]][3] != energy
    # V2-INR and V2-CR lifetimes apart where NFD forwards the consumer's retransmissions
    retx = [by[("artifact", "artifact+retx", c)]["lifetime_days"] for c in ("v2-inr", "v2-cr")]
    assert f"{retx[0]:.0f}" != f"{retx[1]:.0f}"
    assert rows[by[("artifact", "artifact+retx", "v2-inr")]["title"]][4].startswith(
        f"{retx[0]:.0f} (INR), {retx[1]:.0f} (CR) / ")
    # "-" where nothing was delivered: the model with the artifact's adjacent slots
    model = _docs_rows(sensitivity.docs_table(doc, "model"))
    slots = by[("model", "model+slots", "v2-inr")]
    assert slots["delivered"] == 0 and model[slots["title"]][1].startswith("- / - / ")


def test_docs_tables_command_prints_both_studies_and_refuses_bad_input(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    done = subprocess.run([sys.executable, "-m", "dticn.experiments.sensitivity", str(REPORT)],
                          capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "From **artifact**:" in done.stdout and "From **model**:" in done.stdout
    assert "| energy profile | lifetime d V2 / RICE / push |" in done.stdout
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"rows": []}))
    for args, said in (([str(tmp_path / "none.json")], "No such file"),
                       ([str(other)], "not a dticn reproduce --sensitivity report"),
                       ([], "usage:")):
        assert sensitivity.main(args) != 0
        err = capsys.readouterr().err
        assert said in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
