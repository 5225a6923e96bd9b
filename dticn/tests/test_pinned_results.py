"""Results pinned to the byte: ``dticn reproduce --quick``, a multi-node lossy ``dticn sweep``,
``dticn radio`` on every engine and the emulated edge's prediction.

The fixtures under ``tests/pinned/`` were written by the code before the structural
refactoring of issue 15 (layers, one edge builder, the split DSME device). Refactoring must
not change what the simulator computes, so these tests compare the JSON the commands write
with the stored JSON exactly (floats included, after a canonical dump).

Excluded, because they measure the machine and not the model:

* ``summary.wall_s`` and ``summary.sim_s_per_wall_s`` of ``dticn radio`` (wall-clock time).

Nothing of ``dticn reproduce --quick --json``, ``dticn sweep --json`` or the edge prediction
is excluded: every field is a pure function of the seeds.

Only a deliberate change of the model may rewrite the fixtures::

    cd dticn && ../.venv/bin/python tests/test_pinned_results.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from dticn.cli import build_app

PINNED = Path(__file__).parent / "pinned"
WALL_CLOCK_FIELDS = ("wall_s", "sim_s_per_wall_s")
"""Fields of the radio summary that depend on the machine (left out of the comparison)."""

REPRODUCE_ARGS = ["reproduce", "--quick", "--workers", "1"]
SWEEP_ARGS = ["sweep", "--configs", "v1-inr,v2-cr,v3-inr,rice,rice-schedule,push,push-draft",
              "--nodes", "3", "--loss", "0.05", "--seeds", "1", "--duration", "30m",
              "--workers", "1"]
"""Several nodes behind the gateway and a lossy Internet (the quick reproduction has one
node and no loss)."""
EDGE_SCHEMES = ("v3-cr", "rice", "rice-schedule", "push", "push-draft")
"""The emulated gateway's edge, run in virtual time by :func:`dticn.emulation.predict`."""

RADIO_CASES: dict[str, list[str]] = {
    # the closed-form GTS engine, and the event engine on the same scenario
    "batch": ["--nodes", "5", "--duration", "6h", "--engine", "batch"],
    "events": ["--nodes", "5", "--duration", "6h", "--engine", "events"],
    # every beacon as an event, downlink GTS, an 8-chain gateway
    "events-upkeep": ["--nodes", "3", "--duration", "2h", "--engine", "events",
                      "--upkeep", "events", "--downlink", "--rx-chains", "8"],
    # fading: retries in both engines
    "batch-fading": ["--nodes", "4", "--duration", "6h", "--engine", "batch",
                     "--fading", "4", "--radius", "80"],
    "events-fading": ["--nodes", "4", "--duration", "6h", "--engine", "events",
                      "--fading", "4", "--radius", "80"],
    # contention: node traffic in the CAP (slotted CSMA/CA), Poisson arrivals
    "cap": ["--nodes", "6", "--duration", "1h", "--slot", "cap", "--traffic", "poisson:30s",
            "--seed", "4"],
    # association by handshake in the CAP, then GTS traffic
    "handshake": ["--nodes", "3", "--duration", "2h", "--association", "handshake",
                  "--downlink"],
    # a high spreading factor with orthogonal SFs
    "sf10": ["--nodes", "2", "--duration", "3h", "--sf", "10", "--so", "4",
             "--traffic", "periodic:120s", "--inter-sf", "orthogonal"],
}


def _canonical(doc: Any) -> str:
    """One text per document: sorted keys, NaN written as ``NaN`` (json's default)."""
    return json.dumps(doc, indent=1, sort_keys=True, default=str)


def _without_wall_clock(doc: dict[str, Any]) -> dict[str, Any]:
    for key in WALL_CLOCK_FIELDS:
        doc["summary"].pop(key, None)
    return doc


def run_reproduce(tmp: Path) -> dict[str, Any]:
    """``dticn reproduce --quick --json`` (one process, plots into ``tmp``)."""
    out = tmp / "reproduce.json"
    result = CliRunner().invoke(build_app(), [*REPRODUCE_ARGS, "--json", str(out),
                                              "--plots", str(tmp / "plots")])
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text())


def run_sweep(tmp: Path) -> dict[str, Any]:
    """``dticn sweep`` over :data:`SWEEP_ARGS`."""
    out = tmp / "sweep.json"
    result = CliRunner().invoke(build_app(), [*SWEEP_ARGS, "--json", str(out)])
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text())


def run_edge(scheme: str) -> dict[str, Any]:
    """The prediction of a three-node emulated edge: every item's start, end and outcome,
    and the edge's status (registrations, scheme counters, LoRa frames, forwarder)."""
    from dticn.emulation.edge_scenario import EdgeScenario
    from dticn.emulation.emulated_edge import Edge
    from dticn.emulation.predict import predict

    scenario = EdgeScenario(scheme=scheme, nodes=3, seed=5, items=20)
    requests = [(90.0 + 37.0 * k, scenario.item_uri(1 + k % 3, k)) for k in range(20)]
    outcomes = predict(scenario, requests, link_delay_s=0.01)
    edge = Edge(scenario)
    edge.start()
    edge.kernel.run(until=1500.0)
    return {"outcomes": {k: [v.started, v.done, v.outcome] for k, v in outcomes.items()},
            "status": edge.status()}


def run_radio(case: str, tmp: Path) -> dict[str, Any]:
    """``dticn radio <case's options> --json`` without its wall-clock fields."""
    out = tmp / f"radio-{case}.json"
    result = CliRunner().invoke(build_app(), ["radio", *RADIO_CASES[case], "--json", str(out),
                                              "--png", str(tmp / f"radio-{case}.png")])
    assert result.exit_code == 0, result.output
    return _without_wall_clock(json.loads(out.read_text()))


@pytest.mark.slow
def test_reproduce_quick_is_unchanged(tmp_path: Path) -> None:
    expected = (PINNED / "reproduce-quick.json").read_text()
    assert _canonical(run_reproduce(tmp_path)) == expected


@pytest.mark.slow
def test_sweep_with_several_nodes_and_loss_is_unchanged(tmp_path: Path) -> None:
    expected = (PINNED / "sweep-3-nodes-loss.json").read_text()
    assert _canonical(run_sweep(tmp_path)) == expected


@pytest.mark.parametrize("scheme", EDGE_SCHEMES)
def test_emulated_edge_prediction_is_unchanged(scheme: str) -> None:
    expected = (PINNED / f"edge-{scheme}.json").read_text()
    assert _canonical(run_edge(scheme)) == expected


@pytest.mark.parametrize("case", sorted(RADIO_CASES))
def test_radio_engine_output_is_unchanged(case: str, tmp_path: Path) -> None:
    expected = (PINNED / f"radio-{case}.json").read_text()
    assert _canonical(run_radio(case, tmp_path)) == expected


def _rewrite() -> None:
    """Write every fixture from the current code (only for a deliberate model change)."""
    import tempfile

    PINNED.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        (PINNED / "reproduce-quick.json").write_text(_canonical(run_reproduce(Path(tmp))))
        (PINNED / "sweep-3-nodes-loss.json").write_text(_canonical(run_sweep(Path(tmp))))
        for scheme in EDGE_SCHEMES:
            (PINNED / f"edge-{scheme}.json").write_text(_canonical(run_edge(scheme)))
        for case in RADIO_CASES:
            (PINNED / f"radio-{case}.json").write_text(_canonical(run_radio(case, Path(tmp))))
    print(f"wrote {len(RADIO_CASES) + len(EDGE_SCHEMES) + 2} fixtures to {PINNED}", file=sys.stderr)


if __name__ == "__main__":
    _rewrite()
