"""Sparse export of a real checkpoint: smaller on disk, the same outputs as the masked model."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from pactrain.export import load_sparse
from pactrain.models import get_model


def _pactrain(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pactrain.cli", *args], capture_output=True,
                          text=True, timeout=300)


@pytest.mark.slow
def test_export_gives_the_masked_model_back_in_less_space(tmp_path: Path) -> None:
    checkpoint, out = tmp_path / "run.pt", tmp_path / "sparse.pt"
    trained = _pactrain("train", "--model", "digits-cnn", "--steps", "20", "--sparsity", "0.9",
                        "--checkpoint", str(checkpoint))
    assert trained.returncode == 0, trained.stderr[-2000:]
    done = _pactrain("export", str(checkpoint), str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "MB on disk against" in done.stdout

    saved = torch.load(checkpoint, weights_only=False)
    spec = get_model("digits-cnn")
    masked = spec.build(0)
    masked.load_state_dict(saved["model"])
    masks = saved["pactrain"][0]["tracker"]["pruner"]["masks"]
    for name, mask in masks.items():  # the masked dense model
        assert torch.all(masked.get_parameter(name)[~mask] == 0)
    exported = spec.build(1)  # other initial weights: everything must come from the file
    exported.load_state_dict(load_sparse(out))
    masked.eval()
    exported.eval()
    inputs = torch.rand(16, 1, 8, 8)
    assert torch.equal(masked(inputs), exported(inputs))
    dense_bytes = sum(t.numel() * t.element_size() for t in saved["model"].values())
    assert out.stat().st_size < 0.3 * dense_bytes  # 10% of weights kept + a bit per entry


def test_export_refuses_a_checkpoint_without_masks(tmp_path: Path) -> None:
    path = tmp_path / "dense.pt"
    torch.save({"model": {"w": torch.ones(3)}, "tracker": None}, path)
    done = _pactrain("export", str(path), str(tmp_path / "out.pt"))
    assert done.returncode == 2 and "no pruning masks" in done.stderr
    assert not (tmp_path / "out.pt").exists()
