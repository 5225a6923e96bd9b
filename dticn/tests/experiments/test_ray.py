"""``dticn sweep --ray`` on a real local Ray instance (issue 13, item 4): the same rows as
local processes. Skipped where Ray is not installed (it is the optional ``ray`` extra, not
part of ``make setup``): ``pip install -c constraints.txt -e './dticn[ray]'`` runs it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dticn.cli import build_app
from dticn.experiments.params import Experiment
from dticn.experiments.runner import RayMissing, run_many

GRID = ["sweep", "--configs", "v3-cr,push-draft", "--nodes", "1", "--seeds", "2",
        "--duration", "10m"]


@pytest.mark.slow
def test_sweep_on_local_ray_gives_the_rows_of_local_processes(tmp_path: Path) -> None:
    pytest.importorskip("ray", reason="Ray is not installed (optional extra: "
                                      "pip install -c constraints.txt -e './dticn[ray]')")
    runner = CliRunner()
    rows = {}
    for how, extra in (("ray", ["--ray", "local"]), ("local", ["--workers", "1"])):
        out = tmp_path / f"{how}.json"
        result = runner.invoke(build_app(), [*GRID, *extra, "--json", str(out)])
        assert result.exit_code == 0, result.output
        rows[how] = json.loads(out.read_text())["rows"]
    assert [r["config"] for r in rows["ray"]] == ["v3-cr", "push-draft"]
    assert rows["ray"] == rows["local"]


def test_ray_without_ray_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)       # import ray -> ImportError
    # library code raises an error the caller can handle (the CLI turns it into a usage
    # error), never SystemExit
    with pytest.raises(RayMissing, match=r"dticn\[ray\]"):
        run_many([Experiment(duration_s=1.0)], ray_address="local")
    result = CliRunner().invoke(build_app(), [*GRID, "--ray", "local"])
    assert result.exit_code != 0 and "dticn[ray]" in result.output
