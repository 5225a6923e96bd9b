"""`pactrain bench` end to end: real workers (in namespaces when root), JSON, table, plot."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pactrain.bench import netns
from pactrain.bench.report import validate


@pytest.mark.slow
def test_bench_runs_the_grid_and_writes_a_valid_document(tmp_path: Path) -> None:
    out, png = tmp_path / "bench.json", tmp_path / "bench.png"
    proc = subprocess.Popen(
        [sys.executable, "-m", "pactrain.cli", "bench", "--models", "digits-cnn",
         "--methods", "dense,topk", "--workers", "2", "--bandwidth", "50mbit",
         "--steps", "4", "--warmup-steps", "1", "--json", str(out), "--plot", str(png)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    stdout, stderr = proc.communicate(timeout=400)
    assert proc.returncode == 0, stdout + stderr
    document = json.loads(out.read_text())
    validate(document)
    rows = document["rows"]
    assert [r["method"] for r in rows] == ["dense", "topk", "no-comm"]  # + compute floor
    assert all(r["error"] is None and r["samples_per_s"] > 0 for r in rows), (
        [(r["method"], r["error"]) for r in rows], stdout[-3000:], stderr[-3000:])
    assert rows[2]["payload_bytes_per_step"] == 0 and rows[2]["exposed_comm_s_per_step"] == 0
    assert all(r["exposed_comm_s_per_step"] is not None for r in rows)
    # every run clocks its CPU: a share of the shared cores, never none of it
    assert all(r["cpu_s_per_step"] > 0 and 0 < r["host_cpu_busy"] < 1.5 for r in rows), (
        [(r["method"], r["cpu_s_per_step"], r["host_cpu_busy"]) for r in rows])
    assert rows[1]["payload_bytes_per_step"] < rows[0]["payload_bytes_per_step"]
    assert "topk" in stdout
    assert png.exists()
    if os.geteuid() == 0:
        assert document["environment"]["throttled"] is True
        assert rows[0]["bandwidth"] == "50mbit"
        # Dense all-reduce between 2 ranks: each sends its whole gradient once, plus headers.
        wire, payload = rows[0]["wire_bytes_per_step"], rows[0]["payload_bytes_per_step"]
        assert payload <= wire < 1.3 * payload
        # Torn down: nothing left named after the bench's pid (others may run benches too).
        assert not [n for n in netns.list_namespaces() if n.startswith(f"ptnet-{proc.pid}-")]
    else:
        assert "UNTHROTTLED" in stdout


@pytest.mark.slow
def test_bench_races_the_named_model_at_every_bandwidth(tmp_path: Path) -> None:
    out = tmp_path / "race.json"
    proc = subprocess.run(
        [sys.executable, "-m", "pactrain.cli", "bench", "--models", "digits-cnn",
         "--methods", "dense", "--workers", "2", "--bandwidth", "50mbit,100mbit",
         "--steps", "2", "--warmup-steps", "1", "--time-to-accuracy", "0.3",
         "--tta-max-steps", "60", "--tta-eval-every", "30", "--json", str(out),
         "--plot", str(tmp_path / "race.png")],
        capture_output=True, text=True, timeout=500,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    document = json.loads(out.read_text())
    validate(document)
    curves = document["curves"]
    throttled = document["environment"]["throttled"]
    expected = ["50mbit", "100mbit"] if throttled else ["loopback"]  # loopback: raced once
    assert [c["bandwidth"] for c in curves] == expected
    for curve in curves:
        assert curve["model"] == "digits-cnn" and curve["method"] == "dense"
        assert curve["error"] is None and curve["reached_s"] is not None, curve["points"]
        wall, step, accuracy = curve["points"][-1]
        assert step == curve["reached_step"] and accuracy >= 0.3 and wall > 0
    assert "time to 30.0% test accuracy" in proc.stdout
    assert (tmp_path / "race.png").exists()


@pytest.mark.slow
def test_a_bench_stopped_mid_race_keeps_the_finished_entrants_curves(tmp_path: Path) -> None:
    """The partial document is rewritten after every race entrant, so a bench killed in the
    second entrant (a long race at 10 Mbit/s, a lost session) still holds the first curve."""
    out = tmp_path / "race.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "pactrain.cli", "bench", "--models", "digits-cnn",
         "--methods", "dense,fp16", "--workers", "2", "--bandwidth", "50mbit",
         "--steps", "2", "--warmup-steps", "1", "--no-compute-floor",
         "--time-to-accuracy", "0.99", "--tta-max-steps", "400", "--tta-eval-every", "20",
         "--json", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        deadline = time.monotonic() + 400
        first: dict | None = None
        while first is None and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.5)
            try:
                document = json.loads(out.read_text())
            except (OSError, ValueError):  # not written yet, or being written
                continue
            if document["curves"]:
                first = document
        assert first is not None and proc.poll() is None, "no curve before the bench ended"
        proc.terminate()
        stdout, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    document = json.loads(out.read_text())
    validate(document)
    assert document["environment"]["partial"] is True
    assert [c["method"] for c in document["curves"]] == ["dense"], stdout[-2000:]
    assert len(document["curves"][0]["points"]) >= 2  # evaluated every 20 of its steps
    if os.geteuid() == 0:  # the stopped bench still removed its namespaces
        assert not [n for n in netns.list_namespaces() if n.startswith(f"ptnet-{proc.pid}-")]
