"""`dticn validate --quick` for real: the JSON's structure, and Table 5 / Table 8 within the
issue's 15% of DSME-LoRa's published values (arXiv 2206.14077)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dticn.cli import build_app

SECTIONS = {"table5", "table7", "table8", "fig22", "fig22_layout", "fig23"}
ROW_KEYS = {"section", "item", "unit", "theirs", "ours", "source", "tolerance",
            "tolerance_source", "passed", "diff", "method", "cause", "metric", "point"}


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("validate")
    result = CliRunner().invoke(build_app(), ["validate", "--quick", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out, result.output


def test_writes_json_page_and_figures(quick_run: tuple[Path, str]) -> None:
    out, output = quick_run
    doc = json.loads((out / "dticn-validation.json").read_text())
    assert doc["quick"] is True and "2206.14077" in doc["source"]
    assert set(doc["sections"]) == SECTIONS
    for key, section in doc["sections"].items():
        assert section["rows"], key
        for row in section["rows"]:
            assert set(row) == ROW_KEYS
            assert row["section"] == key and "2206.14077" in row["source"]
            assert isinstance(row["ours"], float) and row["cause"]
            assert bool(row["metric"]) == key.startswith("fig22")     # looked up by id
    page = (out / "dticn-validation.md").read_text()
    assert "Table 5" in page and "Fig. 23b" in page and "dticn validate --quick" in page
    assert {p.name for p in out.glob("*.png")} == {f"dticn-validation-{k}.png" for k in SECTIONS}
    assert "Table 8" in output
    budget = doc["fig22_link_budget"]
    assert set(budget) == {"100", "300"}
    assert budget["300"]["delivered_within_attempts"] < budget["100"]["delivered_within_attempts"]


def test_table5_and_table8_within_the_issue_tolerance(quick_run: tuple[Path, str]) -> None:
    doc = json.loads((quick_run[0] / "dticn-validation.json").read_text())
    t5 = doc["sections"]["table5"]["rows"]
    assert [r["item"].split(":")[0] for r in t5] == ["S1", "S2", "S3"]
    t8 = [r for r in doc["sections"]["table8"]["rows"] if r["unit"] in ("mW", "years")]
    assert len(t8) == 10
    for row in t5 + t8:
        assert row["tolerance"] == "15%" and row["passed"] is True, row
        assert abs(row["ours"] - row["theirs"]) <= 0.15 * row["theirs"]


@pytest.mark.parametrize("section", ["fig22", "fig22_layout"])
def test_fig22_rows_cover_cap_and_gts_at_both_sizes(quick_run: tuple[Path, str],
                                                     section: str) -> None:
    doc = json.loads((quick_run[0] / "dticn-validation.json").read_text())
    rows = doc["sections"][section]["rows"]
    items = [r["item"] for r in rows]
    for nodes in (100, 300):
        for interval in (80, 40):
            for kind in ("CAP delivery", "CAP median delay", "GTS delivery"):
                assert f"{kind}, {nodes} nodes, 1/{interval} s" in items
    assert all(r["passed"] for r in rows if "median" in r["item"])


def test_bad_output_directory_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = CliRunner().invoke(build_app(), ["validate", "--quick", "--out",
                                              str(blocker / "sub")])
    assert result.exit_code != 0
    assert "cannot create" in result.output and "Traceback" not in result.output


def test_from_json_rebuilds_page_and_figures(quick_run: tuple[Path, str], tmp_path: Path) -> None:
    result = CliRunner().invoke(build_app(), [
        "validate", "--from-json", str(quick_run[0] / "dticn-validation.json"),
        "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "dticn-validation.md").read_text() == \
        (quick_run[0] / "dticn-validation.md").read_text()
    assert len(list(tmp_path.glob("dticn-validation-*.png"))) == len(SECTIONS)
    assert not (tmp_path / "dticn-validation.json").exists()
    bad = tmp_path / "bad.json"
    bad.write_text('{"a": 1}')
    refused = CliRunner().invoke(build_app(), ["validate", "--from-json", str(bad)])
    assert refused.exit_code != 0 and "not a report of dticn validate" in refused.output


def test_rerun_needs_a_report_and_a_known_part(quick_run: tuple[Path, str],
                                               tmp_path: Path) -> None:
    alone = CliRunner().invoke(build_app(), ["validate", "--rerun", "fig22-sensitivity",
                                             "--out", str(tmp_path)])
    assert alone.exit_code != 0 and "--rerun needs --from-json" in alone.output
    assert "Traceback" not in alone.output
    unknown = CliRunner().invoke(build_app(), [
        "validate", "--from-json", str(quick_run[0] / "dticn-validation.json"),
        "--rerun", "table5", "--out", str(tmp_path)])
    assert unknown.exit_code != 0 and "cannot rerun table5" in unknown.output
    assert "fig22-sensitivity" in unknown.output


def test_sensitivity_rows_name_their_seeds(quick_run: tuple[Path, str]) -> None:
    from dticn.validation import markdown

    doc = json.loads((quick_run[0] / "dticn-validation.json").read_text())
    points = {p: {"delivery": 0.5, "theirs": 0.6, "p50_s": 1.0, "under_10s": 1.0,
                  "queue_drops": 0} for p in ("100/80", "100/40", "300/80", "300/40")}
    doc["fig22_sensitivity"] = [
        {"setting": "old row", "source": "s", "points": points, "max_gap_points": 10.0},
        {"setting": "FLoRa row", "source": "s", "seeds": 3, "points": points,
         "max_gap_points": 10.0}]
    page = markdown(doc, command="dticn validate")
    assert "| old row | 0.500 (1.0 s)" in page
    assert "| FLoRa row (3 seeds) | 0.500 (1.0 s)" in page
    assert "with FLoRa's own PHY" not in page


def test_in_short_reports_floras_phy_from_the_numbers(quick_run: tuple[Path, str]) -> None:
    from dticn.validation import markdown
    from dticn.validation.checks import rows_of

    doc = json.loads((quick_run[0] / "dticn-validation.json").read_text())
    ours = {r["point"]: r["ours"] for r in rows_of(doc, "fig22_layout", "cap_delivery")}
    assert len(ours) == 4

    def row(key: str, shift: float, gap: float) -> dict:
        points = {p: {"delivery": v + shift, "theirs": 0.5, "p50_s": 1.0, "under_10s": 1.0,
                      "queue_drops": 0} for p, v in ours.items()}
        return {"id": key, "setting": key, "source": "s", "seeds": 3, "points": points,
                "max_gap_points": gap}

    doc["fig22_sensitivity"] = [row("rings-flora-rule", 0.05, 20.0),
                                row("rings-flora-both", 0.0, 12.0)]
    page = markdown(doc, command="dticn validate")
    assert "largest gap 12.0 points): the 10-point target stays unmet." in page
    assert "than our rule in the same layout and channel (section below) at 4 of 4 points" in page
    doc["fig22_sensitivity"] = [row("rings-flora-rule", -0.05, 20.0),
                                row("rings-flora-both", 0.0, 9.0)]
    page = markdown(doc, command="dticn validate")
    assert "all four within 10 points" in page and "at 0 of 4 points" in page
