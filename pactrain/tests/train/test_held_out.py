"""Held-out evaluation inside the loop: the race stops every rank at the same step, and
evaluating does not change what is trained."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import torch
from sklearn.datasets import load_digits

from pactrain.train.config import RunConfig
from pactrain.train.local_group import run_on_local_group
from pactrain.train.loop import train_rank


def _train_rank(rank: int, world_size: int, config: RunConfig) -> dict[str, Any]:
    result = train_rank(config, rank, world_size)
    result["weights"] = {k: v.clone() for k, v in torch.load(
        config.checkpoint, weights_only=False)["model"].items()}
    return result


def _config(tmp_path: Path, name: str, **overrides: Any) -> RunConfig:
    base: dict[str, Any] = dict(
        model="digits-cnn", method="pactrain-fp32", workers=2, steps=120, sparsity=0.5,
        seed=0, batch_size=16, warmup_steps=0, probe_link=False, evaluate=True,
        checkpoint=str(tmp_path / f"{name}.pt"))
    base.update(overrides)
    return RunConfig(**base)


def test_race_stops_at_the_target_with_the_weights_of_a_plain_run(tmp_path: Path) -> None:
    load_digits()  # forked ranks inherit scikit-learn's import
    raced = run_on_local_group(_train_rank, 2, _config(
        tmp_path, "raced", eval_every=10, target_metric=0.6), timeout_s=120)
    first = raced[0]
    step = first["reached_step"]
    assert step is not None and step % 10 == 0 and step < 120
    assert all(r["end_step"] == step for r in raced)  # every rank left at the same step
    curve = first["eval_curve"]
    assert [p[1] for p in curve] == list(range(10, step + 1, 10))
    assert curve[-1][2] >= 0.6 > max(p[2] for p in curve[:-1])
    assert all(a[0] < b[0] for a, b in itertools.pairwise(curve))
    assert first["reached_s"] == curve[-1][0] and first["eval_paused_s"] > 0
    assert first["elapsed_s"] >= first["reached_s"]
    # the same schedule stopped at that step without evaluations: identical weights
    plain = run_on_local_group(_train_rank, 2, _config(tmp_path, "plain", stop_after=step),
                               timeout_s=120)[0]
    assert all(torch.equal(first["weights"][k], plain["weights"][k]) for k in plain["weights"])
    assert first["final_test_accuracy"] == plain["final_test_accuracy"]


def test_time_budget_stops_at_the_first_evaluation_after_it(tmp_path: Path) -> None:
    load_digits()
    result = run_on_local_group(_train_rank, 2, _config(
        tmp_path, "budget", eval_every=4, target_metric=1.01, train_budget_s=0.0),
        timeout_s=120)[0]
    assert result["end_step"] == 4 and result["reached_step"] is None
    assert len(result["eval_curve"]) == 1
