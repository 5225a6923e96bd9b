"""`dticn airtime` and `dticn radio` from the command line."""

import json
from pathlib import Path

from typer.testing import CliRunner

from dticn.cli import build_app

runner = CliRunner()


def test_airtime_prints_ms_and_symbols() -> None:
    out = runner.invoke(build_app(), ["airtime", "--sf", "7", "--bw", "125", "--cr", "4/5",
                                      "--payload", "20"])
    assert out.exit_code == 0, out.output
    assert "56.576 ms" in out.output
    data = json.loads(runner.invoke(build_app(), ["airtime", "--sf", "12", "--payload", "51",
                                                  "--json"]).output)
    assert data["time_on_air_ms"] == 2465.792
    assert data["symbols"] == 75.25 and data["payload_symbols"] == 63


def test_airtime_rejects_bad_input_with_reason() -> None:
    out = runner.invoke(build_app(), ["airtime", "--cr", "3/5"])
    assert out.exit_code != 0
    assert "4/5" in out.output


def test_radio_writes_table_json_and_png(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    out = runner.invoke(build_app(), ["radio", "--nodes", "5", "--duration", "2h",
                                      "--traffic", "periodic:60s", "--sf", "7",
                                      "--json", str(target)])
    assert out.exit_code == 0, out.output
    assert "lifetime" in out.output
    data = json.loads(target.read_text())
    assert data["summary"]["nodes"] == 5
    assert {"delivery_ratio", "latency_s", "collisions", "retries", "airtime_s",
            "energy_per_day_J_mean", "lifetime_days_min"} <= set(data["summary"])
    assert (tmp_path / "out.png").stat().st_size > 10_000


def test_radio_scenario_file_and_auto_mo(tmp_path: Path) -> None:
    scenario = tmp_path / "edge.toml"
    scenario.write_text('nodes = 40\nduration = "1h"\ntraffic = "periodic:300s"\n')
    out = runner.invoke(build_app(), ["radio", str(scenario), "--mo", "auto", "--rows", "2"])
    assert out.exit_code == 0, out.output
    assert "MO=BO=6" in out.output


def test_radio_runs_lorawan_class_a(tmp_path: Path) -> None:
    target = tmp_path / "lw.json"
    out = runner.invoke(build_app(), ["radio", "--mac", "lorawan-a", "--confirmed",
                                      "--nodes", "5", "--duration", "2h", "--traffic",
                                      "periodic:600s", "--payload", "8", "--energy-profile",
                                      "casals-class-a", "--json", str(target)])
    assert out.exit_code == 0, out.output
    assert "MAC lorawan-a confirmed" in out.output
    data = json.loads(target.read_text())
    assert data["scenario"]["mac"] == "lorawan-a" and data["summary"]["delivery_ratio"] == 1.0
    assert data["gateway"]["lorawan"]["acks_rx1"] == data["summary"]["delivered"]
    assert data["nodes"][0]["energy"]["profile"] == "casals-class-a"
    assert (tmp_path / "lw.png").stat().st_size > 0


def test_radio_refuses_dsme_settings_and_oversized_items_for_lorawan() -> None:
    for args, reason in ((["--mo", "5"], "superframe orders"),
                         (["--sf", "12", "--payload", "60"], "51-byte maximum"),
                         (["--pcap", "x.pcap"], "DSME runs only")):
        out = runner.invoke(build_app(), ["radio", "--mac", "lorawan-a", *args])
        assert out.exit_code == 2, out.output
        assert reason in out.output
