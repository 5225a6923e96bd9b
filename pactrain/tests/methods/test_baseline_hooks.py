"""Each baseline hook on a real 2-process gloo group, against the exact mean gradient.

All cases run in one launch of the group (``ddp_case.py``) to keep start-up costs down.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from pactrain.compression.compressors import k_for

CASE = Path(__file__).with_name("ddp_case.py")
TENSORS = (64 * 64, 64, 64 * 8, 8)  # entries of the tiny model's parameters
NUMEL = sum(TENSORS)
TERNGRAD_STEPS = 1200
CASES = [
    ("exact", "none", {}, 1),
    ("fp16", "fp16", {}, 1),
    ("powersgd", "powersgd", {"rank": 4, "start_iter": 2}, 3),
    ("topk-full", "topk", {"density": 1.0}, 1),
    ("topk-ef", "topk", {"density": 0.05}, 4),
    ("dgc-full", "dgc", {"density": 1.0, "clip_norm": None}, 2),
    ("dgc-sparse", "dgc", {"density": 0.01, "warmup_steps": 0, "clip_norm": None}, 3),
    ("terngrad", "terngrad", {"clip_sigma": None}, TERNGRAD_STEPS),
    # Several buckets per step: chained collectives must keep one order on all ranks.
    ("powersgd-buckets", "powersgd", {"rank": 4, "start_iter": 2, "_bucket_cap_mb": 0.001}, 4),
    ("terngrad-buckets", "terngrad", {"_bucket_cap_mb": 0.001}, 20),
]


def _free_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


def run_group(tmp: Path, cases: list, world: int = 2) -> list[dict[str, Any]]:
    """Run ``cases`` on ``world`` real gloo processes; per rank, results by case name."""
    port = _free_port()
    outs = [tmp / f"rank{r}.pt" for r in range(world)]
    procs = [
        subprocess.Popen([sys.executable, str(CASE), json.dumps(cases), str(r), str(world),
                          port, str(outs[r])],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for r in range(world)
    ]
    for p in procs:
        output, _ = p.communicate(timeout=300)
        assert p.returncode == 0, output
    return [torch.load(o) for o in outs]


@pytest.fixture(scope="module")
def ranks(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    return run_group(tmp_path_factory.mktemp("hooks"), CASES)


@pytest.fixture(scope="module")
def exact(ranks: list[dict[str, Any]]) -> torch.Tensor:
    """Plain DDP (PyTorch's built-in all-reduce): the exact mean gradient."""
    return ranks[0]["exact"]["grads"][0]


pytestmark = pytest.mark.slow


def test_fp16_is_close_to_the_exact_mean_and_sends_two_bytes(ranks, exact) -> None:
    got = ranks[0]["fp16"]
    assert torch.allclose(got["grads"][0], exact, rtol=1e-2, atol=1e-4)
    assert not torch.equal(got["grads"][0], exact)  # it really went through fp16
    assert got["payload_per_step"] == 2 * NUMEL


def test_powersgd_recovers_a_low_rank_gradient_exactly(ranks, exact) -> None:
    # Batch 1 per rank: each weight gradient has rank 1, their sum over 2 ranks rank 2 <= 4.
    got = ranks[0]["powersgd"]
    for step in range(3):
        assert torch.allclose(got["grads"][step], exact, atol=1e-5)
    # Two warm-up steps send everything; the compressed step only P, Q and the biases.
    assert got["payload_per_step"] < 4 * NUMEL
    assert got["summary"]["compression_rate"] > 1.5


def test_topk_with_k_equal_numel_is_the_exact_mean(ranks, exact) -> None:
    got = ranks[0]["topk-full"]
    assert torch.allclose(got["grads"][0], exact, atol=1e-7)
    assert got["payload_per_step"] == 8 * NUMEL


def test_topk_error_feedback_keeps_what_was_dropped(ranks, exact) -> None:
    steps = 4
    runs = [r["topk-ef"] for r in ranks]
    applied = runs[0]["grads"].sum(0)
    assert torch.equal(applied, runs[1]["grads"].sum(0))  # all ranks apply the same
    assert not torch.allclose(runs[0]["grads"][0], exact, atol=1e-5)  # lossy per step
    # Per rank: sent over all steps + residual = steps x local gradient; so on average
    # applied + mean residual = steps x exact mean. Nothing was lost, only delayed.
    for run in runs:
        assert run["residual"].abs().sum() > 0
    residual = torch.stack([run["residual"] for run in runs]).mean(0)
    assert torch.allclose(applied + residual, steps * exact, atol=1e-5)
    k_total = runs[0]["payload_per_step"] / 8
    assert k_total == sum(k_for(n, 0.05) for n in TENSORS)  # top-k per parameter


def test_dgc_at_full_density_without_clipping_is_the_exact_mean(ranks, exact) -> None:
    # Momentum-factor masking clears every entry that was sent, so at density 1 the
    # momentum never builds up and DGC sends the plain gradient.
    got = ranks[0]["dgc-full"]
    for step in range(2):
        assert torch.allclose(got["grads"][step], exact, atol=1e-6)


def test_dgc_sends_the_target_density_with_momentum_correction(ranks) -> None:
    got = ranks[0]["dgc-sparse"]
    nonzero = (got["grads"] != 0).sum(1)
    k = sum(k_for(n, 0.01) for n in TENSORS)  # ~1%, selected per parameter
    assert (nonzero <= 2 * k).all()  # each of 2 ranks sends k entries
    # Unsent entries keep accumulating m*u + g, so later steps send larger values.
    assert got["grads"][2].abs().max() > got["grads"][0].abs().max()
    assert got["payload_per_step"] == 8 * k


def test_terngrad_is_unbiased_and_sends_one_byte_per_entry(ranks, exact) -> None:
    got = ranks[0]["terngrad"]
    assert torch.equal(got["grads"], ranks[1]["terngrad"]["grads"])
    def error(steps: int) -> float:
        return float((got["grads"][:steps].mean(0) - exact).norm() / exact.norm())

    # Unbiased: the average converges to the exact mean, the error falls like 1/sqrt(T).
    assert error(TERNGRAD_STEPS) < 0.1
    assert error(TERNGRAD_STEPS) < 0.65 * error(TERNGRAD_STEPS // 4)
    # Each step's value is scale * (integer in [-2, 2]) / 2: at most 5 levels per tensor.
    assert got["grads"][0][: 64 * 64].unique().numel() <= 5
    assert got["payload_per_step"] == NUMEL + 4 * 4  # codes + one fp32 scale per tensor


def test_chained_collectives_keep_one_order_across_several_buckets(ranks, exact) -> None:
    # Without BucketSerializer, gloo aborts here with a collective size mismatch.
    got = ranks[0]["powersgd-buckets"]
    for step in range(4):
        assert torch.allclose(got["grads"][step], exact, atol=1e-5)
    tern = [r["terngrad-buckets"]["grads"] for r in ranks]
    assert torch.equal(tern[0], tern[1]) and tern[0].shape == (20, NUMEL)
