"""End-to-end training through the launcher: worker subprocesses on a local gloo group."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from pactrain.train.config import RunConfig
from pactrain.train.launch import WorkerFailedError, run_training


def _weights(path: Path) -> dict[str, torch.Tensor]:
    return torch.load(path, map_location="cpu", weights_only=False)["model"]


def _config(tmp_path: Path, method: str, name: str, **overrides: object) -> RunConfig:
    base = dict(model="digits-cnn", method=method, workers=2, steps=20, sparsity=0.8, seed=0,
                batch_size=16, warmup_steps=2, probe_link=False,
                checkpoint=str(tmp_path / f"{name}.pt"))
    base.update(overrides)
    return RunConfig(**base)


@pytest.mark.slow
def test_dense_and_compacted_fp32_end_with_the_same_weights(tmp_path: Path) -> None:
    dense_json = tmp_path / "dense.json"
    subprocess.run(
        [sys.executable, "-m", "pactrain.cli", "train", "--model", "digits-cnn",
         "--method", "dense", "--workers", "2", "--steps", "20", "--sparsity", "0.8",
         "--seed", "0", "--batch-size", "16", "--json", str(dense_json),
         "--checkpoint", str(tmp_path / "dense.pt")],
        check=True, capture_output=True, timeout=300,
    )
    dense = json.loads(dense_json.read_text())
    compact = run_training(_config(tmp_path, "pactrain-fp32", "fp32"), progress=False,
                           timeout_s=300)
    a, b = _weights(tmp_path / "dense.pt"), _weights(tmp_path / "fp32.pt")
    assert all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)
    for result in (dense, compact):
        assert result["mask_consistent"] and result["mask_repairs"] == 0
        assert result["density"] == pytest.approx(0.2, abs=0.01)
    assert dense["payload_bytes_per_step"] == dense["dense_payload_bytes_per_step"]
    ideal = compact["ideal_payload_bytes_per_step"]  # density x prunable + the dense rest
    assert abs(compact["final_payload_bytes_per_step"] - ideal) <= 0.02 * ideal
    assert compact["tier_counts"] == {"fp32": 20}
    assert compact["final_test_accuracy"] == pytest.approx(dense["final_test_accuracy"])


@pytest.mark.slow
def test_resume_reproduces_the_uninterrupted_run(tmp_path: Path) -> None:
    run_training(_config(tmp_path, "pactrain-ternary", "full"), progress=False, timeout_s=300)
    run_training(_config(tmp_path, "pactrain-ternary", "half", stop_after=8),
                 progress=False, timeout_s=300)
    resumed = run_training(
        _config(tmp_path, "pactrain-ternary", "resumed", resume=str(tmp_path / "half.pt")),
        progress=False, timeout_s=300)
    assert resumed["start_step"] == 8 and resumed["mask_consistent"]
    full, again = _weights(tmp_path / "full.pt"), _weights(tmp_path / "resumed.pt")
    assert all(torch.equal(full[k], again[k]) for k in full)
    def masks_of(path: Path) -> dict:
        return torch.load(path, weights_only=False)["pactrain"][0]["tracker"]["pruner"]["masks"]

    masks, masks_full = masks_of(tmp_path / "resumed.pt"), masks_of(tmp_path / "full.pt")
    assert all(torch.equal(masks[k], masks_full[k]) for k in masks)


@pytest.mark.slow
def test_the_loops_ddp_settings_change_no_number(tmp_path: Path) -> None:
    """Why the loop departs from DDP's defaults (no buffer broadcast at every forward,
    gradients as bucket views): BatchNorm normalises training batches by their own
    statistics and rank 0 (which evaluates and saves) never receives the broadcast, and a
    view holds the same numbers as a copy; so weights, running statistics and accuracy
    are the same bit for bit, and only the wire and the CPU carry less."""
    settings = {"ddp-defaults": dict(broadcast_buffers=True, gradient_as_bucket_view=False),
                "no-broadcast": dict(broadcast_buffers=False, gradient_as_bucket_view=False),
                "loop-defaults": {}}
    results = {name: run_training(
        _config(tmp_path, "pactrain-fp32", name, model="resnet18", steps=4, batch_size=4,
                warmup_steps=1, sparsity=0.5, **overrides),
        progress=False, timeout_s=300) for name, overrides in settings.items()}
    reference = _weights(tmp_path / "ddp-defaults.pt")
    assert any("running_var" in k for k in reference)  # the model has the buffers in question
    for name in ("no-broadcast", "loop-defaults"):
        weights = _weights(tmp_path / f"{name}.pt")
        assert weights.keys() == reference.keys()
        assert all(torch.equal(weights[k], reference[k]) for k in reference), name
        assert results[name]["final_test_accuracy"] == results["ddp-defaults"][
            "final_test_accuracy"]


@pytest.mark.slow
def test_a_failing_worker_surfaces_its_traceback(tmp_path: Path) -> None:
    config = _config(tmp_path, "dense", "bad", model="no-such-model", checkpoint=None)
    with pytest.raises(WorkerFailedError, match="unknown model 'no-such-model'"):
        run_training(config, progress=False, timeout_s=120)


@pytest.mark.slow
def test_pruned_pactrain_matches_unpruned_dense_accuracy_at_equal_steps() -> None:
    common = dict(model="digits-cnn", workers=2, steps=300, seed=0, warmup_steps=5)
    dense = run_training(RunConfig(method="dense", sparsity=0.0, **common), progress=False,
                         timeout_s=600)
    sparse = run_training(RunConfig(method="pactrain", sparsity=0.8, **common),
                          progress=False, timeout_s=600)
    assert sparse["density"] == pytest.approx(0.2, abs=0.01)
    assert sparse["final_test_accuracy"] >= dense["final_test_accuracy"] - 0.01, (
        dense["final_test_accuracy"], sparse["final_test_accuracy"], sparse["tier_counts"])
