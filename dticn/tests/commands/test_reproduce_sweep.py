"""`dticn reproduce` and `dticn sweep` end to end (short runs): table, JSON schema, plots."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dticn.cli import build_app

ROW_KEYS = {"config", "success_ratio", "latency_p50_s", "latency_p95_s",
            "internet_packets_per_item", "lora_frames_per_item", "lora_airtime_s_per_item",
            "node_energy_j_per_day", "lifetime_days"}


@pytest.mark.slow
def test_reproduce_writes_rows_and_plots(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = CliRunner().invoke(build_app(), [
        "reproduce", "--quick", "--configs", "v3-cr,rice-schedule,push-draft", "--seeds", "2",
        "--duration", "10m", "--workers", "1", "--json", str(out)])
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    assert [r["config"] for r in doc["rows"]] == ["v3-cr", "rice-schedule", "push-draft"]
    for row in doc["rows"]:
        assert set(row) >= ROW_KEYS
        assert row["seeds"] == [1, 2]
    push = doc["rows"][2]
    assert push["success_ratio"] == 1.0 and push["lifetime_days"] > 365
    assert sorted(p.name for p in tmp_path.glob("*.png")) == [
        "latency_cdf.png", "lifetime.png", "messages_per_item.png", "success_ratio.png"]
    assert "Internet loss 0%" in result.output and "success" in result.output


def test_reproduce_refuses_unknown_configuration() -> None:
    result = CliRunner().invoke(build_app(), ["reproduce", "--configs", "v9"])
    assert result.exit_code != 0 and "known" in result.output


@pytest.mark.slow
def test_sweep_runs_a_small_grid(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    result = CliRunner().invoke(build_app(), [
        "sweep", "--configs", "push-draft", "--nodes", "1,3", "--seeds", "1",
        "--duration", "10m", "--workers", "1", "--json", str(out)])
    assert result.exit_code == 0, result.output
    rows = json.loads(out.read_text())["rows"]
    assert [r["nodes"] for r in rows] == [1, 3]
    assert all(r["success_ratio"] == 1.0 for r in rows)
