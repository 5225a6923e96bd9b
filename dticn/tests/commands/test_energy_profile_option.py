"""`--energy-profile` on reproduce and sweep (issue 16): every row names its energy profile;
the artifact profile uses the measured one."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from dticn.cli import build_app


def test_reproduce_rows_name_the_energy_profile(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    args = ["reproduce", "--configs", "push", "--seeds", "1", "--duration", "10m",
            "--workers", "1", "--profile", "model", "--profile", "artifact"]
    result = CliRunner().invoke(build_app(), [*args, "--json", str(out), "--plots",
                                              str(tmp_path)])
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    by = doc["rows_by_profile"]
    assert by["model"]["0.0"][0]["energy_profile"] == "optimised"
    assert by["artifact"]["0.0"][0]["energy_profile"] == "dsme-lora"
    assert "lifetimes from energy profile dsme-lora" in result.output
    result = CliRunner().invoke(build_app(), [*args[:-2], "--energy-profile", "dsme-lora",
                                              "--json", str(out), "--plots", str(tmp_path)])
    assert result.exit_code == 0, result.output
    row = json.loads(out.read_text())["rows"][0]
    assert row["energy_profile"] == "dsme-lora" and row["profile"] == "model"
    assert row["lifetime_days"] < 1000      # the measured platform: about two years at most
    bad = CliRunner().invoke(build_app(), [*args, "--energy-profile", "nope"])
    assert bad.exit_code != 0 and "known" in bad.output


def test_sweep_names_the_energy_profile(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    result = CliRunner().invoke(build_app(), [
        "sweep", "--configs", "push", "--seeds", "1", "--duration", "10m", "--workers", "1",
        "--energy-profile", "dsme-lora", "--json", str(out)])
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    assert doc["energy_profile"] == "dsme-lora"
    assert doc["rows"][0]["energy_profile"] == "dsme-lora"
    assert "energy profile dsme-lora" in result.output
