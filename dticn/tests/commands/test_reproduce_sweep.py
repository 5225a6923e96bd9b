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


def test_reproduce_puts_the_macs_side_by_side(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = CliRunner().invoke(build_app(), [
        "reproduce", "--quick", "--configs", "rice-schedule,push-draft", "--seeds", "1",
        "--duration", "10m", "--workers", "1", "--mac", "dsme", "--mac", "lorawan-a",
        "--json", str(out)], env={"COLUMNS": "240"})
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    assert doc["settings"]["macs"] == ["dsme", "lorawan-a"]
    by_mac = doc["rows_by_mac"]
    for mac in ("dsme", "lorawan-a"):
        rows = by_mac[mac]["model"]["0.0"]
        assert [r["config"] for r in rows] == ["rice-schedule", "push-draft"]
        assert all(r["mac"] == mac and r["success_ratio"] == 1.0 for r in rows)
    assert doc["rows"] == by_mac["dsme"]["model"]["0.0"]
    # push over class A rides the uplink; over DSME it waits for the node's uplink GTS
    assert (by_mac["lorawan-a"]["model"]["0.0"][1]["latency_p50_s"]
            < by_mac["dsme"]["model"]["0.0"][1]["latency_p50_s"])
    assert (tmp_path / "mac_comparison.png").stat().st_size > 10_000
    assert "side by side" in result.output and "MAC lorawan-a" in result.output


@pytest.mark.parametrize(("args", "message"), [
    (["--mac", "lorawan-z"], "unknown MAC"),
    (["--mac", "lorawan-b", "--energy-profile", "dsme-lora"], "measured on dsme"),
    (["--mac", "lorawan-a", "--pcap", "{tmp}/traces"], "IEEE 802.15.4"),
    (["--mac", "lorawan-a", "--sensitivity"], "drop --mac"),
])
def test_reproduce_refuses_what_a_mac_cannot_run(args: list[str], message: str,
                                                  tmp_path: Path) -> None:
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    result = CliRunner().invoke(build_app(), ["reproduce", "--quick", *args],
                                env={"COLUMNS": "240"})
    assert result.exit_code == 2 and message in result.output, result.output
    assert not (tmp_path / "traces").exists()


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
