"""Issue 22, item 5: a run records its tier decisions as a plan; a run replaying the plan
takes the same tiers at the same steps, measures nothing, and repeats exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from pactrain.plan import PlanError, ReplayPolicy, load_plan
from pactrain.tiers import TIER_NAMES as TIERS
from pactrain.train.config import RunConfig
from pactrain.train.launch import run_training


def test_a_plan_says_each_buckets_tier_from_the_step_it_was_chosen() -> None:
    entries = load_plan([{"step": 3, "bucket": 0, "tier": "fp16"},
                         {"step": 0, "bucket": 1, "tier": "packed"},
                         {"step": 0, "bucket": 0, "tier": "dense"}], TIERS)
    assert [e["step"] for e in entries] == [0, 0, 3]
    policy = ReplayPolicy(entries)
    assert [policy.tier_at(s, 0) for s in range(5)] == ["dense"] * 3 + ["fp16"] * 2
    assert policy.tier_at(99, 1) == "packed"
    with pytest.raises(PlanError, match="no tier for bucket 2 at step 0"):
        policy.tier_at(0, 2)


@pytest.mark.parametrize(("plan", "message"), [
    ([], "non-empty list"),
    ({"steps": 3}, "no 'plan' in this JSON"),
    ([{"step": 0, "bucket": 0}], "exactly step, bucket and tier"),
    ([{"step": -1, "bucket": 0, "tier": "fp32"}], "integers >= 0"),
    ([{"step": 0, "bucket": 0, "tier": "int4"}], "unknown tier 'int4'"),
])
def test_a_malformed_plan_is_refused_with_the_entry(plan: object, message: str) -> None:
    with pytest.raises(PlanError, match=message):
        load_plan(plan, TIERS)  # type: ignore[arg-type]


def test_a_plan_file_that_is_not_json_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "plan.json"
    bad.write_text("{not json")
    with pytest.raises(PlanError, match="cannot read the plan"):
        load_plan(bad, TIERS)


def _weights(path: Path) -> dict[str, torch.Tensor]:
    return torch.load(path, map_location="cpu", weights_only=False)["model"]


@pytest.mark.slow
def test_replaying_a_plan_repeats_the_run_exactly(tmp_path: Path) -> None:
    def run(name: str, **extra: object) -> dict:
        config = RunConfig(model="digits-cnn", method="pactrain", workers=2, steps=16,
                           sparsity=0.8, seed=0, batch_size=16, warmup_steps=0,
                           prune_start=0.0, prune_end=0.5, refresh_every=5,
                           checkpoint=str(tmp_path / f"{name}.pt"), **extra)
        return run_training(config, progress=False, timeout_s=300)

    measured = run("measured")                      # probes, refreshes: timing decides
    plan = measured["plan"]
    assert plan and {e["tier"] for e in plan if "tier" in e} <= set(TIERS)
    assert any("operating_point" in e for e in plan)  # the run's point is replayed too
    (tmp_path / "result.json").write_text(json.dumps(measured))
    replayed = run("replayed", plan=load_plan(tmp_path / "result.json", TIERS))
    again = run("again", plan=plan)
    assert replayed["tier_counts_per_bucket"] == measured["tier_counts_per_bucket"]
    assert replayed["plan"] == plan and again["plan"] == plan
    assert "probe" not in replayed["control_by_collective"]   # nothing measured
    first, second, third = (_weights(tmp_path / f"{n}.pt")
                            for n in ("measured", "replayed", "again"))
    for name in first:
        assert torch.equal(first[name], second[name]), name
        assert torch.equal(second[name], third[name]), name


def test_the_cli_refuses_a_plan_before_any_worker_starts(tmp_path: Path) -> None:
    import subprocess
    import sys

    good = tmp_path / "plan.json"
    good.write_text(json.dumps([{"step": 0, "bucket": 0, "tier": "fp32"}]))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"method": "pactrain"}))
    for args, message in ((["--method", "dense", "--plan", str(good)], "use --method pactrain"),
                          (["--plan", str(bad)], "no 'plan' in this JSON")):
        out = subprocess.run([sys.executable, "-m", "pactrain.cli", "train", *args],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 2 and message in out.stderr, out.stderr
        assert "Traceback" not in out.stderr
