"""Every registered method: stop, checkpoint and resume ends bit-identical to one run.

Why it is shaped this way:

- ``STEPS`` and ``STOP`` put the stop in the middle of the pruning schedule (masks change
  before and after it), after PowerSGD's warm-up (its P, Q and error memories matter) and
  after DGC's density warm-up; and ``bucket_cap_mb=0.01`` splits digits-cnn into several
  DDP buckets, which DDP rebuilds after the first iteration of *each* process: the first
  step after the resume runs in another bucket layout than the step before the stop.
- Ranks are forked from this process (:func:`run_on_local_group`) and call
  :func:`train_rank`, the function the launcher's workers run, instead of launching fresh
  interpreters with ``run_training``: a fresh worker spends about 10 s importing torch,
  torch._dynamo and scikit-learn, which for 3 runs of every method would be minutes; a
  fork inherits them (warmed once by :func:`_warm_imports`).
  ``tests/train/test_training.py`` covers the launcher's own resume path.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import torch

from pactrain.data.digits import load_split
from pactrain.methods import load_builtin_methods
from pactrain.operating_point import schedule_or_gradual
from pactrain.pruning import PruningConfig
from pactrain.train.config import RunConfig
from pactrain.train.local_group import LocalGroupError, run_on_local_group
from pactrain.train.loop import train_rank

STEPS, STOP = 12, 6
METHODS = load_builtin_methods().names()


def _train_rank(rank: int, world_size: int, config: RunConfig) -> dict[str, Any]:
    return train_rank(config, rank, world_size)


def _train(config: RunConfig) -> dict[str, Any]:
    """Rank 0's result of ``config`` on a forked local gloo group."""
    return run_on_local_group(_train_rank, config.workers, config, timeout_s=120)[0]


def _config(tmp_path: Path, method: str, name: str, **overrides: Any) -> RunConfig:
    base: dict[str, Any] = dict(
        model="digits-cnn", method=method, workers=2, steps=STEPS, sparsity=0.8, seed=0,
        batch_size=16, warmup_steps=2, probe_link=False, evaluate=False, bucket_cap_mb=0.01,
        checkpoint=str(tmp_path / f"{name}.pt"),
    )
    base.update(overrides)
    return RunConfig(**base)


@pytest.fixture(scope="module", autouse=True)
def _warm_imports() -> None:
    """Import once here what every rank would import lazily (scikit-learn's digits, and
    torch._dynamo, which the first optimizer pulls in): forked ranks inherit it."""
    load_split()
    torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)


def _load(path: Path) -> dict[str, Any]:
    return torch.load(path, map_location="cpu", weights_only=False)


def test_the_stop_falls_inside_pruning_and_after_every_warm_up(tmp_path: Path) -> None:
    # the runs measure nothing (probe_link=False), so attach lays the gradual schedule
    config = _config(tmp_path, "dense", "x")
    start, end, initial = schedule_or_gradual(config.prune_start, config.prune_end,
                                              config.prune_initial)
    schedule = PruningConfig.for_run(config.steps, config.sparsity, config.prune_scope,
                                     start, end, config.prune_frequency, initial)
    assert schedule.start_step < STOP < schedule.end_step
    assert STOP > 5  # PowerSGD's start_iter (2) and DGC's warmup_steps (5)


@pytest.mark.parametrize("method", METHODS)
def test_stop_and_resume_equals_the_uninterrupted_run(tmp_path: Path, method: str) -> None:
    _train(_config(tmp_path, method, "full"))
    _train(_config(tmp_path, method, "half", stop_after=STOP))
    resumed = _train(_config(tmp_path, method, "resumed", resume=str(tmp_path / "half.pt")))
    assert resumed["start_step"] == STOP and resumed["end_step"] == STEPS

    full, again = _load(tmp_path / "full.pt"), _load(tmp_path / "resumed.pt")
    drift = {k: float((full["model"][k] - again["model"][k]).abs().max())
             for k in full["model"]}
    assert all(torch.equal(full["model"][k], again["model"][k]) for k in full["model"]), (
        f"{method}: max |dw| per tensor after stop + resume: {drift}")
    if full["pactrain"][0]["tracker"] is not None:
        masks = full["pactrain"][0]["tracker"]["pruner"]["masks"]
        masks_again = again["pactrain"][0]["tracker"]["pruner"]["masks"]
        assert all(torch.equal(masks[k], masks_again[k]) for k in masks)


def test_pactrain_error_feedback_resumes_bit_identically(tmp_path: Path) -> None:
    """PacTrain keeps no residuals by default; with them, the per-name residual memory
    laid out per bucket must follow DDP's rebuild and the resume's other layout exactly."""
    extra = {"error_feedback": True}
    _train(_config(tmp_path, "pactrain-ternary", "full", **extra))
    _train(_config(tmp_path, "pactrain-ternary", "half", stop_after=STOP, **extra))
    _train(_config(tmp_path, "pactrain-ternary", "resumed", resume=str(tmp_path / "half.pt"),
                   **extra))
    full, again = _load(tmp_path / "full.pt"), _load(tmp_path / "resumed.pt")
    residuals = [r["method"]["residuals"] for r in full["pactrain"]]
    assert all(len(r) == len(full["model"]) for r in residuals)  # one per parameter
    assert any(float(t.abs().sum()) > 0 for r in residuals for t in r.values())
    assert all(torch.equal(full["model"][k], again["model"][k]) for k in full["model"])


@pytest.mark.parametrize("select", ["topk", "topk-ahead"])
def test_sampled_packed_resumes_bit_identically(tmp_path: Path, select: str) -> None:
    """Sampling inside the mask: the residuals and, for ``topk-ahead``, the chunk maxima
    agreed for the next step (kept per parameter name in the checkpoint) must carry the
    run across the stop, DDP's rebuild and the masks that change after it."""
    extra = {"method_options": {"send_density": 0.05, "send_select": select}}
    _train(_config(tmp_path, "pactrain-packed", "full", **extra))
    _train(_config(tmp_path, "pactrain-packed", "half", stop_after=STOP, **extra))
    _train(_config(tmp_path, "pactrain-packed", "resumed", resume=str(tmp_path / "half.pt"),
                   **extra))
    full, half = _load(tmp_path / "full.pt"), _load(tmp_path / "half.pt")
    again = _load(tmp_path / "resumed.pt")
    if select == "topk-ahead":
        pieces = half["pactrain"][0]["method"]["ahead_maxima"]["pieces"]
        assert len(pieces) == len(full["model"])  # one per parameter
    assert all(torch.equal(full["model"][k], again["model"][k]) for k in full["model"])


def test_adamw_prunes_and_resumes_bit_identically(tmp_path: Path) -> None:
    """Under AdamW the checkpoint carries both moments, and the pruner keeps them zero at
    pruned entries, so a stop and resume inside the pruning schedule is still exact."""
    extra = {"optimizer": "adamw"}
    _train(_config(tmp_path, "pactrain-packed", "full", **extra))
    _train(_config(tmp_path, "pactrain-packed", "half", stop_after=STOP, **extra))
    _train(_config(tmp_path, "pactrain-packed", "resumed", resume=str(tmp_path / "half.pt"),
                   **extra))
    full, again = _load(tmp_path / "full.pt"), _load(tmp_path / "resumed.pt")
    assert all(torch.equal(full["model"][k], again["model"][k]) for k in full["model"])
    moments = [s for s in full["optimizer"]["state"].values() if "exp_avg_sq" in s]
    assert moments and all(float(s["exp_avg_sq"].abs().sum()) > 0 for s in moments)
    masks = full["pactrain"][0]["tracker"]["pruner"]["masks"]
    assert any((~m).any() for m in masks.values())
    for name, mask in masks.items():
        assert (full["model"][name][~mask] == 0).all()


def test_dgc_refuses_adamw(tmp_path: Path) -> None:
    """DGC applies SGD momentum in its hook and turns the optimizer's off; AdamW has none
    to turn off, so the pair would apply momentum twice: refused, naming the fix."""
    with pytest.raises(LocalGroupError, match="--optimizer sgd"):
        _train(_config(tmp_path, "dgc", "x", optimizer="adamw"))


@pytest.fixture(scope="module")
def fp16_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A checkpoint of ``fp16`` on 2 workers at sparsity 0.8, stopped after 2 steps."""
    tmp = tmp_path_factory.mktemp("fp16")
    _train(_config(tmp, "fp16", "half", stop_after=2))
    return tmp / "half.pt"


@pytest.mark.parametrize(("change", "named"), [
    ({"method": "topk"}, "method 'fp16' (this run: 'topk')"),
    ({"sparsity": 0.5}, "sparsity 0.8 (this run: 0.5)"),
    ({"workers": 1}, "workers 2 (this run: 1)"),
    ({"optimizer": "adamw"}, "optimizer 'sgd' (this run: 'adamw')"),
])
def test_resume_refuses_a_checkpoint_of_another_run(
    tmp_path: Path, fp16_checkpoint: Path, change: dict[str, Any], named: str,
) -> None:
    config = replace(_config(tmp_path, "fp16", "other", resume=str(fp16_checkpoint)), **change)
    with pytest.raises(LocalGroupError, match=re.escape(named) + ".*resume it with"):
        _train(config)
