"""`pactrain.estimate`: the job's buckets are DDP's, PacTrain is priced as the policy
prices it, payloads are those of real runs, and the walk hides what fits."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch.distributed as dist

from pactrain.costs import ComputeCosts, LinkModel
from pactrain.estimate import (
    Context,
    Job,
    LocalCosts,
    Options,
    Tensor,
    estimate,
    job_of_count,
    job_of_model,
)
from pactrain.estimate.calibrate import measure_alpha_s, measure_local_costs
from pactrain.estimate.job import BUCKET_CAP_BYTES, FIRST_BUCKET_BYTES
from pactrain.estimate.prices import tier_price
from pactrain.estimate.step import walk
from pactrain.models import get_model
from pactrain.tiers import TIER_NAMES, get_tier
from pactrain.train.config import RunConfig
from pactrain.train.launch import run_training

ZERO_COSTS = LocalCosts(ComputeCosts(0.0, 0.0, 0.0, 0.0, 0.0), 0.0, 0.0, 0.0)


@pytest.mark.parametrize("name", ["digits-cnn", "fashion-cnn", "lm-gpt"])
def test_buckets_are_the_ones_ddp_rebuilds(name: str) -> None:
    """The layout the estimate walks is the one DDP computes when it rebuilds its buckets
    after the first step (its own function, over the parameters in backward order, with
    its rebuild limits: 1 MiB, then 25 MiB)."""
    params = [p for p in get_model(name).build(0).parameters() if p.requires_grad]
    backward = list(reversed(params))
    indices, _ = dist._compute_bucket_assignment_by_size(
        backward, [FIRST_BUCKET_BYTES, BUCKET_CAP_BYTES], [False] * len(backward))
    ddp_sizes = [sum(4 * backward[i].numel() for i in bucket) for bucket in indices]
    job = job_of_model(name, compute_s=0.1)
    assert [4 * b.numel for b in job.buckets()] == ddp_sizes
    shares = [b.ready_share for b in job.buckets()]
    assert shares == sorted(shares) and shares[-1] == 1.0


def test_a_bucket_is_ready_when_its_layers_backward_is_done() -> None:
    """fashion-cnn's classifier (99% of the bytes, 45% of the FLOPs) is ready before the
    convolutions' backward, which its transfer can hide behind."""
    first, _ = job_of_model("fashion-cnn", 0.1).buckets()
    assert first.numel > 0.99 * 3_222_538 and 0.4 < first.ready_share < 0.5


def test_pactrain_tiers_are_priced_by_their_declarations() -> None:
    """The estimate's tier price is the tier's own (the adaptive policy's numbers),
    split into link and local work."""
    link = LinkModel(3e-4, 8 / 10e6)
    tiers = ComputeCosts(1e-10, 3e-9, 1e-9, 6e-9, 5e-9)
    ctx = Context(link, LocalCosts(tiers), 4, Options(sparsity=0.9))
    bucket = job_of_model("fashion-cnn", 0.1).buckets()[0]
    kept = bucket.kept(0.1)
    for name in TIER_NAMES:
        price = tier_price(name, bucket, ctx)
        declared = get_tier(name).price(link, tiers, bucket.numel, kept, 4)
        assert price.link_s + price.local_s == pytest.approx(declared)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["powersgd", "topk", "pactrain-fp32", "pactrain-packed"])
def test_payload_is_what_a_real_run_sends(method: str) -> None:
    """Bytes per step of a real 2-worker run, once warm (PowerSGD's plain first steps and
    the mask's first step behind it), equal the estimate's payload."""
    config = RunConfig(model="digits-cnn", method=method, workers=2, steps=8, sparsity=0.8,
                       batch_size=16, warmup_steps=4, prune_start=0.0, prune_end=0.0,
                       evaluate=False, probe_link=False)
    result = run_training(config, progress=False, timeout_s=300)
    job = job_of_model("digits-cnn", 0.1)
    ctx = Context(LinkModel(), ZERO_COSTS, 2, Options(sparsity=0.8))
    predicted, = estimate(job, ctx, (method,))
    assert result["payload_bytes_per_step"] == pytest.approx(predicted.payload_bytes,
                                                             rel=0.01)


def test_the_walk_hides_transfers_that_end_before_backward_does() -> None:
    """Two buckets: the first ready at half the backward pass. Its transfer hides while
    it ends before the backward pass does; the last bucket's never hides."""
    job = Job("two", (Tensor("a", (1000,), True), Tensor("b", (1000,), True)), compute_s=1.0,
              backward_share=0.5)
    buckets = job.buckets(first_cap=4000, cap=4000)
    assert [b.ready_share for b in buckets] == [0.5, 1.0]   # 0.25 s and 0.5 s into it
    from pactrain.estimate.prices import BucketPrice

    hidden = [BucketPrice(0.2, 0.0, 1.0), BucketPrice(0.1, 0.0, 1.0)]
    assert walk(job, buckets, hidden) == pytest.approx((0.0, 0.3, 0.1))
    queued = [BucketPrice(0.4, 0.0, 1.0), BucketPrice(0.1, 0.0, 1.0)]
    # the first ends at 0.25 + 0.4 = 0.65, the second starts then: 0.25 exposed
    assert walk(job, buckets, queued) == pytest.approx((0.0, 0.5, 0.25))
    local = [BucketPrice(0.0, 0.05, 1.0), BucketPrice(0.1, 0.05, 1.0)]
    assert walk(job, buckets, local) == pytest.approx((0.1, 0.1, 0.1))


def test_adaptive_budgets_only_where_the_link_is_slow() -> None:
    job = job_of_model("fashion-cnn", 0.15)
    slow = Context(LinkModel(3e-4, 8 / 10e6), ZERO_COSTS, 4, Options(sparsity=0.9))
    fast = Context(LinkModel(3e-4, 8 / 100e9), ZERO_COSTS, 4, Options(sparsity=0.9))
    on_slow, = estimate(job, slow, ("pactrain",))
    on_fast, = estimate(job, fast, ("pactrain",))
    assert "slow link" in on_slow.reasons[0] and "fast link" in on_fast.reasons[0]
    assert any(r.startswith("send_density") for r in on_slow.reasons)
    assert on_slow.payload_bytes < 0.1 * 4 * job.numel
    assert set(on_fast.tiers) <= {"fp32", "dense"}    # exact where nothing needs cutting


def test_a_count_lays_out_every_parameter() -> None:
    job = job_of_count(2_500_000, 0.1)
    assert job.numel == 2_500_000
    with pytest.raises(ValueError, match="parameters must be >= 1"):
        job_of_count(0, 0.1)
    with pytest.raises(ValueError, match="compute per step must be > 0"):
        job_of_count(10, 0.0)


def test_calibration_measures_latency_and_sharing() -> None:
    alpha = measure_alpha_s(2)
    assert 0 < alpha < 0.05
    costs = measure_local_costs(4, cores=2)
    assert costs.sharing == 2.0 and costs.gemm_s_per_flop > 0 and costs.topk_s_per_entry > 0


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pactrain.cli", "estimate", *args],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "400"})  # one line per message


def test_cli_answers_for_a_parameter_count(tmp_path: Path) -> None:
    out = tmp_path / "estimate.json"
    done = _cli("--parameters", "25.6M", "--compute-s", "0.1", "--alpha-us", "50",
                "--local-costs", "none", "--workers", "8", "--bandwidth", "1gbit,100gbit",
                "--json", str(out))
    assert done.returncode == 0, done.stderr
    document = json.loads(out.read_text())
    assert document["parameters"] == 25_600_000
    slow, fast = document["links"]
    steps = {e["method"]: e["step_s"] for e in slow["estimates"]}
    assert steps["pactrain"] < steps["dense"]       # 102 MB of fp32 on a 1 Gbit/s link
    fast_steps = {e["method"]: e["step_s"] for e in fast["estimates"]}
    assert fast_steps["dense"] < 1.1 * 0.1 + 0.01   # at 100 Gbit/s the compute is the step
    assert steps["pactrain"] < steps["fp16"] < steps["dense"]
    assert "pactrain" in slow["verdict"] and slow["verdict"] in " ".join(done.stdout.split())


def test_cli_projects_a_reference_job_over_worker_counts(tmp_path: Path) -> None:
    """GPT-2 small at its published step, 8 and 256 workers: each count's collective pays
    2(N-1) ring steps, and the step never falls below the compute."""
    out = tmp_path / "projection.json"
    done = _cli("--model", "gpt2-small", "--workers", "8,256", "--hop-us", "20",
                "--local-costs", "none", "--bandwidth", "10gbit", "--json", str(out))
    assert done.returncode == 0, done.stderr
    document = json.loads(out.read_text())
    assert document["parameters"] == 124_439_808
    eight, many = document["links"]
    assert (eight["workers"], many["workers"]) == (8, 256)
    assert many["alpha_s"] == pytest.approx(2 * 255 * 20e-6)
    for link in (eight, many):
        assert all(e["step_s"] >= 0.576 for e in link["estimates"])


@pytest.mark.parametrize(("args", "message"), [
    (["--workers", "64"], "give --compute-s"),
    (["--workers", "1"], "at least 2"),
    (["--hop-us", "20"], "not both"),
    (["--model", "no-such-model"], "no-such-model"),
    (["--parameters", "lots", "--compute-s", "1"], "cannot read 'lots'"),
    (["--parameters", "1M"], "give --compute-s"),
    (["--model", "digits-cnn", "--parameters", "1M"], "not both"),
    (["--compute-s", "0.1", "--methods", "dense,zip"], "no price for zip"),
    (["--compute-s", "0.1", "--bandwidth", "fast"], "cannot read bandwidth"),
    (["--compute-s", "0.1", "--local-costs", "some"], "measured or none"),
])
def test_cli_refuses_bad_input_in_one_line(args: list[str], message: str) -> None:
    done = _cli(*args, "--alpha-us", "50")
    assert done.returncode == 2
    assert message in " ".join(done.stderr.split())


@pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")
def test_the_link_probe_fits_what_a_shaped_link_gives() -> None:
    """Through a 10 Mbit/s tbf link both collectives get most, never more, of the rate,
    and the probe leaves no namespace behind."""
    from pactrain.bench import netns
    from pactrain.bench.link_probe import probe_shaped_link
    from pactrain.bench.network import bench_network

    with bench_network(2) as network:
        probed = probe_shaped_link(network, 2, "10mbit", repeats=2)
        run_id = network.topology.run_id
    ring, gather = probed.efficiency(10_000_000)
    assert 0.5 < ring <= 1.05 and 0.3 < gather <= 1.05, (ring, gather)
    assert 0 < probed.ring.alpha_s < 0.1
    assert not [n for n in netns.list_namespaces() if run_id in n]
