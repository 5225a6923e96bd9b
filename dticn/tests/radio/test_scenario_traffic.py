"""Scenario files shipped with the package, and the traffic models."""

from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from dticn.radio.engines import run
from dticn.radio.scenario import Scenario
from dticn.radio.traffic import arrivals, parse_traffic


def test_shipped_scenarios_load_and_run_short() -> None:
    folder = resources.files("dticn.radio").joinpath("scenarios")
    names = sorted(p.name for p in folder.iterdir() if p.name.endswith(".toml"))
    assert names == ["artifact.toml", "many-nodes.toml"]
    artifact = Scenario.from_file(str(folder.joinpath("artifact.toml")), duration_s=3600.0)
    assert artifact.downlink_gts and artifact.nodes == 1
    result = run(artifact)
    assert result.summary()["delivery_ratio"] > 0.95


def test_unknown_scenario_keys_are_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("nodez = 3\n")
    with pytest.raises(ValueError, match="unknown scenario keys"):
        Scenario.from_file(bad)


def test_traffic_models() -> None:
    rng = np.random.default_rng(1)
    periodic = arrivals("periodic:600s", 86400.0, rng)
    assert len(periodic) == 144 and np.allclose(np.diff(periodic), 600.0)
    gaps = np.diff(arrivals("uniform:50s..70s", 86400.0, rng))
    assert gaps.min() >= 50.0 and gaps.max() <= 70.0
    poisson = arrivals("poisson:60s", 864000.0, rng)
    assert np.mean(np.diff(poisson)) == pytest.approx(60.0, rel=0.05)
    assert parse_traffic("uniform:50s..70s")[1] == 60.0
    with pytest.raises(ValueError, match="periodic:600s"):
        parse_traffic("bursty:5s")
