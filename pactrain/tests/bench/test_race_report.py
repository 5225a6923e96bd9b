"""``benchmarks/race_report.py`` judges races from the bench's JSON as the docs quote it.

The documents here are written the way ``pactrain bench`` writes them (a ``rows`` list and
a ``curves`` list of ``(training seconds, steps, metric)`` points); the expected numbers
are computed from those points in each test, so a changed reading of a curve fails.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "race_report.py"


@pytest.fixture(scope="module")
def report() -> ModuleType:
    spec = importlib.util.spec_from_file_location("race_report", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def curve(method: str, points: list[tuple[float, int, float]], target: float = 0.88,
          metric: str = "test_accuracy") -> dict:
    return {"model": "fashion-resnet18", "bandwidth": "10mbit", "method": method,
            "metric": metric, "target": target, "points": [list(p) for p in points],
            "payload_bytes_per_step": 250_000.0, "sparsity": 0.9, "error": None}


def linear(startup_s: float, step_s: float, accuracies: list[float], every: int = 50
           ) -> list[tuple[float, int, float]]:
    """Evaluations every ``every`` steps of a run that pays ``startup_s`` once, then
    ``step_s`` per step."""
    return [(startup_s + step_s * every * (i + 1), every * (i + 1), a)
            for i, a in enumerate(accuracies)]


def write(path: Path, *curves: dict) -> Path:
    rows = [{"model": c["model"], "bandwidth": c["bandwidth"], "method": c["method"],
             "step_s": 0.7} for c in curves]
    path.write_text(json.dumps({"rows": rows, "curves": list(curves), "environment": {}}))
    return path


PACKED = linear(10.0, 0.8, [0.80, 0.85, 0.86, 0.87])     # 50 s, 90 s, 130 s, 170 s
RANK4 = linear(160.0, 1.2, [0.80, 0.84, 0.85, 0.86])    # 220, 280, 340, 400 s
RANK1 = linear(5.0, 0.5, [0.82, 0.85, 0.855, 0.855])    # 30, 55, 80, 105 s


def test_curve_readings(report: ModuleType) -> None:
    assert report.first_reaching(PACKED, 0.85, lower=False) == (90.0, 100)
    assert report.first_reaching(PACKED, 0.9, lower=False) is None
    assert report.first_reaching([[1.0, 5, 3.0], [2.0, 10, 2.4]], 2.5, lower=True) == (2.0, 10)
    assert report.steady_step_s(PACKED) == pytest.approx(0.8)
    assert report.steady_step_s(PACKED[:1]) is None


def test_a_race_nobody_wins_says_so_and_a_forced_level_judges_it(
        report: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    race = write(tmp_path / "race.json", curve("powersgd", RANK4),
                 curve("pactrain-packed", PACKED))
    assert report.main([str(race)]) == 0
    out = capsys.readouterr().out
    assert "no PacTrain method reached the target (88.00%)" in out

    md = tmp_path / "race.md"
    assert report.main([str(race), "--target", "0.85", "--md", str(md)]) == 0
    out = capsys.readouterr().out
    ratio = 90.0 / 340.0
    assert (f"pactrain-packed reached the target (85.00%) in 90.0 s, {ratio:.2f}x the fastest "
            "other method (powersgd, 340.0 s): target <= 0.8x met.") in out
    assert md.read_text() == out[:-1]  # print adds the last newline
    packed = next(r for r in report.race_rows(json.loads(race.read_text()), None,
                                              targets={("fashion-resnet18", "10mbit"): 0.85})
                  if r["method"] == "pactrain-packed")
    assert packed["startup_s"] == pytest.approx(10.0)  # 90 s - 100 steps x 0.8 s
    assert packed["best"] == 0.87 and packed["steps_run"] == 200


def test_the_common_target_is_the_lowest_best(report: ModuleType, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    race = write(tmp_path / "race.json", curve("powersgd", RANK4),
                 curve("pactrain-packed", PACKED))
    assert report.main([str(race), "--common-target"]) == 0
    out = capsys.readouterr().out  # both reached 86%: packed at 130 s, PowerSGD at 400 s
    assert f"in 130.0 s, {130 / 400:.2f}x the fastest other method (powersgd, 400.0 s)" in out
    assert "(86.00%)" in out


def test_pool_judges_entrants_of_separate_runs_together(
        report: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = write(tmp_path / "r4.json", curve("powersgd", RANK4),
                  curve("pactrain-packed", PACKED))
    second = write(tmp_path / "r1.json", curve("powersgd-r1", RANK1))
    assert report.main([str(first), str(second), "--target", "0.85"]) == 0
    apart = capsys.readouterr().out
    assert "(r4): pactrain-packed reached" in apart and "met." in apart
    assert "(r1): no PacTrain method reached" in apart

    assert report.main([str(first), str(second), "--target", "0.85", "--pool"]) == 0
    pooled = capsys.readouterr().out  # rank 1 got there at 55 s, before packed's 90 s
    assert (f"in 90.0 s, {90 / 55:.2f}x the fastest other method (powersgd-r1, 55.0 s): "
            "target <= 0.8x missed.") in pooled
    assert "fashion-resnet18 (r1)" in pooled  # the table still names each row's file


def test_a_percentage_for_an_accuracy_is_refused(
        report: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    race = write(tmp_path / "race.json", curve("pactrain-packed", PACKED))
    with pytest.raises(SystemExit) as leaving:
        report.main([str(race), "--target", "85"])
    assert leaving.value.code == 2
    assert "accuracies are fractions (0.85 for 85%)" in capsys.readouterr().err


def test_a_loss_race_without_a_target_uses_dense_loss_at_the_named_step(
        report: ModuleType, tmp_path: Path) -> None:
    dense = curve("dense", [(10.0, 10, 3.0), (20.0, 20, 2.5), (30.0, 30, 2.2)],
                  target=0.0, metric="test_loss")
    ours = curve("pactrain", [(6.0, 10, 2.9), (12.0, 20, 2.45), (18.0, 30, 2.1)],
                 target=0.0, metric="test_loss")
    document = json.loads(write(tmp_path / "lm.json", dense, ours).read_text())
    rows = report.race_rows(document, at_step=20)
    assert {r["target"] for r in rows} == {2.5}
    assert {r["method"]: r["reached_s"] for r in rows} == {"dense": 20.0, "pactrain": 12.0}
    verdict = report.verdicts(rows)
    assert any(f"{12 / 20:.2f}x the fastest other method (dense, 20.0 s)" in v
               for v in verdict)
