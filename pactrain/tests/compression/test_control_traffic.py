"""Issue 22, item 3: every collective of the training core goes through the communicator,
control traffic (policy probes and agreements, mask checks) is counted apart and in the
total, and communication time is reported without counting overlaps twice."""

from __future__ import annotations

import ast
import time
from pathlib import Path

import pytest
import torch

import pactrain
from pactrain.compression.communicator import Communicator
from pactrain.train.config import RunConfig
from pactrain.train.launch import run_training

ROOT = Path(pactrain.__file__).parent
COLLECTIVES = {"all_reduce", "all_gather", "broadcast", "barrier", "reduce", "gather",
               "scatter", "send", "recv", "isend", "irecv", "all_to_all", "reduce_scatter"}
HARNESS = {"compression/communicator.py",   # the one place a method's collectives start
           "compression/hierarchical.py",   # the same communicator, two-level
           "train/held_out.py",             # the loop's early-stop flag, once per evaluation
           "train/loop.py"}                 # the loop's final barrier


def test_only_the_communicator_calls_collectives() -> None:
    wrong = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        if rel in HARNESS:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in COLLECTIVES and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "dist"):
                wrong.append(f"{rel}:{node.lineno} dist.{node.func.attr}")
    assert not wrong, "collectives outside the communicator:\n" + "\n".join(wrong)


def test_busy_time_counts_overlapping_collectives_once() -> None:
    comm = Communicator()
    first, second = torch.futures.Future(), torch.futures.Future()
    comm._time(first, comm._launched(), None)
    comm._time(second, comm._launched(), None)
    time.sleep(0.05)
    first.set_result(None)
    time.sleep(0.05)
    second.set_result(None)
    comm.end_step()
    time.sleep(0.02)
    comm.note_backward_done()
    assert comm.collective_seconds == pytest.approx(0.15, abs=0.03)
    assert comm.busy_seconds == pytest.approx(0.10, abs=0.02)
    assert comm.seconds_per_step() == comm.busy_seconds          # one step
    assert comm.exposed_seconds == pytest.approx(0.02, abs=0.015)
    assert comm.control_bytes_per_step() == 0
    restored = Communicator()
    restored.__setstate__(comm.__getstate__())
    assert restored.time_summary() == comm.time_summary()


@pytest.mark.slow
def test_control_traffic_is_counted_apart_and_in_the_total(tmp_path: Path) -> None:
    config = RunConfig(model="digits-cnn", method="pactrain", workers=2, steps=12,
                       sparsity=0.8, seed=0, batch_size=16, warmup_steps=0, probe_link=True,
                       refresh_every=5, prune_start=0.0, prune_end=0.5,
                       checkpoint=str(tmp_path / "run.pt"))
    result = run_training(config, progress=False, timeout_s=300)
    control = result["control_by_collective"]
    updates = len(result["mask_history"])
    assert updates >= 2
    assert control["mask_check"] == 16 * (updates + 1)  # (h, -h) per update and at the end
    assert control["probe"] > 0 and control["policy"] > 0    # start-up probes, agreements
    assert "barrier" in control                              # the refresh's barrier
    per_step = result["control_bytes_per_step"]
    assert per_step == pytest.approx(sum(control.values()) / 12)
    assert result["total_bytes_per_step"] == pytest.approx(
        result["payload_bytes_per_step"] + per_step)
    assert 0 < result["comm_s_per_step"] <= result["collective_s_per_step"]
    assert result["comm_exposed_s_per_step"] >= 0
