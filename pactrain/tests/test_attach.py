"""`pactrain.attach` in a user's own loop: real gloo groups, real torchrun, real hooks."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel

import pactrain
from pactrain.attached import AttachError
from pactrain.export import export_checkpoint, load_sparse
from pactrain.pruning import NothingToPruneError
from pactrain.train.launch import free_port
from pactrain.train.local_group import run_on_local_group

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                         nn.Linear(32, 4))


def _train(ddp: nn.Module, optimizer: torch.optim.Optimizer, rank: int, steps: range,
           micro: int = 1) -> None:
    """The user's own loop: nothing PacTrain-specific in it."""
    for step in steps:
        optimizer.zero_grad()
        for part in range(micro):
            generator = torch.Generator().manual_seed(1000 * step + 10 * rank + part)
            x = torch.randn(8, 12, generator=generator)
            y = torch.randint(0, 4, (8,), generator=generator)
            if part < micro - 1:
                with ddp.no_sync():
                    nn.functional.cross_entropy(ddp(x), y).backward()
            else:
                nn.functional.cross_entropy(ddp(x), y).backward()
        optimizer.step()


def _weights(model: nn.Module) -> list[torch.Tensor]:
    return [p.detach().clone() for p in model.parameters()]


def _prunes_and_compacts(rank: int, world_size: int) -> dict:
    model = _model()
    ddp = DistributedDataParallel(model)
    optimizer = torch.optim.AdamW(ddp.parameters(), lr=0.01, weight_decay=0.1)
    pt = pactrain.attach(ddp, optimizer, sparsity=0.75, total_steps=20, method="pactrain-fp32",
                         prune_start=0.0, prune_end=0.25)
    _train(ddp, optimizer, rank, range(12), micro=2)
    with torch.no_grad():  # an evaluation forward between steps changes nothing
        model.eval()
        ddp(torch.randn(3, 12))
        model.train()
    _train(ddp, optimizer, rank, range(12, 20), micro=2)
    zero = sum(int((m.weight == 0).sum()) for m in model if isinstance(m, nn.Linear))
    return {"step": pt.step, "density": pt.density(), "zero": zero,
            "weights": _weights(model), "counts": pt.summary()["tier_counts"],
            "last_bytes": pt.method.payload.total_bytes}


def test_attach_prunes_masks_and_compacts_without_per_step_calls() -> None:
    results = run_on_local_group(_prunes_and_compacts, 2)
    prunable = 12 * 32 + 32 * 32 + 32 * 4
    for result in results:
        assert result["step"] == 20  # one step per optimizer.step, micro-batches and eval aside
        assert result["density"] == pytest.approx(0.25, abs=1e-3)
        # AdamW with weight decay: pruned weights stay exactly zero (state and grads masked)
        assert result["zero"] == int(0.75 * prunable)
        assert result["counts"] == {"fp32": 20}  # compacted every step
    for a, b in zip(results[0]["weights"], results[1]["weights"], strict=True):
        assert torch.equal(a, b)


def _resume(rank: int, world_size: int, stop: int | None, state: dict | None,
            sparsity: float = 0.75) -> dict:
    model = _model()
    ddp = DistributedDataParallel(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    pt = pactrain.attach(ddp, optimizer, sparsity=sparsity, total_steps=16,
                         method="pactrain-ternary", prune_start=0.0, prune_end=0.5)
    start = 0
    if state is not None:
        model.load_state_dict(state["model"][rank])
        optimizer.load_state_dict(state["optimizer"][rank])
        try:
            pt.load_state_dict(state["pactrain"][rank])
        except AttachError as err:
            return {"error": str(err)}
        start = pt.step
    _train(ddp, optimizer, rank, range(start, stop or 16))
    return {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
            "pactrain": pt.state_dict(), "weights": _weights(model)}


def test_state_dict_resumes_bit_identically_and_refuses_other_settings() -> None:
    whole = run_on_local_group(_resume, 2, None, None)
    first = run_on_local_group(_resume, 2, 7, None)
    saved = {key: [r[key] for r in first] for key in ("model", "optimizer", "pactrain")}
    resumed = run_on_local_group(_resume, 2, None, saved)
    for a, b in zip(whole[0]["weights"], resumed[0]["weights"], strict=True):
        assert torch.equal(a, b)  # ternary draws, masks, residuals and step all restored
    other = run_on_local_group(_resume, 2, None, saved, 0.5)
    assert "sparsity 0.75 (attached: 0.5)" in other[0]["error"]


def _refusals(rank: int, world_size: int) -> dict:
    errors = {}
    model = _model()
    ddp = DistributedDataParallel(model)
    started = torch.optim.SGD(ddp.parameters(), lr=0.1)
    ddp(torch.randn(2, 12)).sum().backward()
    try:
        pactrain.attach(ddp, started, total_steps=10)
    except AttachError as err:
        errors["started"] = str(err)
    other = torch.optim.SGD(_model().parameters(), lr=0.1)
    try:
        pactrain.attach(DistributedDataParallel(_model()), other, total_steps=10)
    except AttachError as err:
        errors["optimizer"] = str(err)
    norm_only = DistributedDataParallel(nn.Sequential(nn.LayerNorm(4)))
    try:
        pactrain.attach(norm_only, torch.optim.SGD(norm_only.parameters(), lr=0.1),
                        total_steps=10)
    except NothingToPruneError as err:
        errors["nothing"] = str(err)
    fresh = DistributedDataParallel(_model())
    try:
        pactrain.attach(fresh, torch.optim.SGD(fresh.parameters(), lr=0.1), total_steps=10,
                        method="no-such-method")
    except KeyError as err:
        errors["method"] = str(err)
    try:
        pactrain.attach(fresh, torch.optim.SGD(fresh.parameters(), lr=0.1), total_steps=10,
                        sparsity=0.5, prune_initial=0.7)
    except ValueError as err:
        errors["initial"] = str(err)
    return errors


def test_attach_refuses_what_cannot_work_with_the_fix_named() -> None:
    errors = run_on_local_group(_refusals, 2)[0]
    assert "before the first forward pass" in errors["started"]
    assert "ddp_model.parameters()" in errors["optimizer"]
    assert "no trainable weight matrix" in errors["nothing"]
    assert "pactrain" in errors["method"] and "powersgd" in errors["method"]
    assert "prune_initial=0.7 and sparsity=0.5" in errors["initial"]  # attach's own names
    with pytest.raises(AttachError, match="DistributedDataParallel"):
        model = _model()
        pactrain.attach(model, torch.optim.SGD(model.parameters(), lr=0.1), total_steps=5)


def _frozen_and_tied(rank: int, world_size: int) -> dict:
    torch.manual_seed(0)
    shared = nn.Linear(16, 16)
    model = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), shared, nn.ReLU(), shared,
                          nn.ReLU(), nn.Linear(16, 4))
    model[0].weight.requires_grad_(False)
    frozen_before = model[0].weight.detach().clone()
    ddp = DistributedDataParallel(model)
    optimizer = torch.optim.SGD([p for p in ddp.parameters() if p.requires_grad], lr=0.05)
    pt = pactrain.attach(ddp, optimizer, sparsity=0.5, total_steps=6, method="pactrain-fp32",
                         prune_start=0.0, prune_end=0.0)
    _train(ddp, optimizer, rank, range(6))
    pruner = pt.tracker.pruner
    return {"frozen_same": torch.equal(model[0].weight, frozen_before),
            "names": sorted(pruner.params), "aliases": pruner.aliases,
            "frozen": pruner.frozen, "density": pt.density(),
            "shared_zero": int((shared.weight == 0).sum())}


def _payload_with(rank: int, world_size: int, method: str) -> dict:
    model = _model()
    ddp = DistributedDataParallel(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05)
    pt = pactrain.attach(ddp, optimizer, sparsity=0.8, total_steps=6, method=method,
                         prune_start=0.0, prune_end=0.0)
    _train(ddp, optimizer, rank, range(6))
    return pt.summary()


@pytest.mark.parametrize(("method", "bound"), [("pactrain-fp32", 0.25), ("pactrain-fp16", 0.13)])
def test_a_fixed_tier_sends_what_the_density_says(method: str, bound: float) -> None:
    """With a fixed tier the payload does not depend on timing, so its bound is tight:
    80% pruned from the first step, compacted fp32 is the 20% kept plus the dense biases."""
    summary = run_on_local_group(_payload_with, 2, method)[0]
    dense_bytes = 4 * sum(p.numel() for p in _model().parameters())
    assert summary["density"] == pytest.approx(0.2, abs=0.01)
    assert summary["payload_bytes_per_step"] <= bound * dense_bytes
    assert summary["control_bytes_per_step"] > 0            # the mask check, counted


def test_frozen_layers_are_left_alone_and_tied_weights_share_one_mask() -> None:
    result = run_on_local_group(_frozen_and_tied, 2)[0]
    assert result["frozen_same"] and result["frozen"] == ["0.weight"]
    assert result["names"] == ["2.weight", "6.weight"]  # the tied layer ranked once
    assert result["aliases"] == {"4.weight": "2.weight"}
    assert result["density"] == pytest.approx(0.5, abs=1e-3)
    assert result["shared_zero"] > 0


def _run_example(name: str, launcher: str, tmp_path: Path, *extra: str) -> list[dict]:
    """Run ``examples/name`` as a user would (2 CPU processes); each rank's JSON line."""
    script = str(EXAMPLES / name)
    # a fixed tier: the adaptive policy sent every bucket dense on a loaded machine (2 runs
    # of 9 of the Lightning example, 2026-12-06), so its bytes cannot carry a bound
    extra = ("--method", "pactrain-fp16", *extra)
    if launcher == "torchrun":
        command = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "1",
                   "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
                   "--master_port", str(free_port()), script, *extra]
    else:  # the script launches its own processes (Lightning)
        command = [sys.executable, script, *extra]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MASTER_PORT": str(free_port())}
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert sorted(line["rank"] for line in lines) == [0, 1]
    prunable = 64 * 256 + 256 * 256 + 256 * 10
    dense_bytes = 4 * (prunable + 256 + 256 + 10)
    for line in lines:
        assert line["world_size"] == 2
        assert line["steps"] == 200 and line["density"] == pytest.approx(0.2, abs=1e-3)
        assert line["zero_weights"] == int(0.8 * prunable)  # pruned weights are zero
        assert line["test_accuracy"] > 0.9
        # Compacted on the wire, on the fixed fp16 tier: 2 of 4 bytes per kept entry,
        # and the gradual ramp (dense for steps 0-19, the cubic ramp to 80% over 20-120,
        # then 20%) keeps about 0.4 of the entries on average, so 0.2 x dense; no timing
        # enters a fixed tier, so the bound is this plus a margin for the mask updates'
        # step granularity.
        assert line["payload_bytes_per_step"] < 0.3 * dense_bytes
    assert lines[0]["weights_sum"] == lines[1]["weights_sum"]  # one model on both ranks
    return lines


@pytest.mark.slow
def test_torchrun_minimal_example_runs_as_a_user_would(tmp_path: Path) -> None:
    _run_example("torchrun_minimal.py", "torchrun", tmp_path, "--checkpoint",
                 str(tmp_path / "pt"))
    saved = torch.load(tmp_path / "pt.rank0", weights_only=False)
    assert saved["pactrain"]["step"] == 200
    assert saved["pactrain"]["settings"]["world_size"] == 2
    # the user's own checkpoint exports too: the same weights, a fraction of the bytes
    report = export_checkpoint(tmp_path / "pt.rank0", tmp_path / "sparse.pt")
    assert report.density == pytest.approx(0.2, abs=1e-3)
    assert report.file_bytes < 0.4 * report.dense_bytes
    restored = load_sparse(tmp_path / "sparse.pt")
    for name, tensor in saved["model"].items():
        assert torch.equal(restored[name], tensor)


@pytest.mark.slow
def test_accelerate_example_attaches_to_what_prepare_returns(tmp_path: Path) -> None:
    pytest.importorskip("accelerate", reason="optional extra pactrain[accelerate]")
    _run_example("accelerate_loop.py", "torchrun", tmp_path)


@pytest.mark.slow
def test_lightning_callback_prunes_under_the_ddp_strategy(tmp_path: Path) -> None:
    pytest.importorskip("lightning", reason="optional extra pactrain[lightning]")
    _run_example("lightning_callback.py", "self", tmp_path)


def _masks_once(rank: int, world_size: int) -> dict:
    """Count the optimizer pre-hook's own masking passes: after a backward through DDP the
    compaction hook has zeroed every pruned entry (no second pass); after one that bypassed
    DDP (the wrapped module called directly) the pre-hook masks, also when a DDP backward
    came before it in the same step."""
    model = _model()
    ddp = DistributedDataParallel(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1)
    pt = pactrain.attach(ddp, optimizer, sparsity=0.75, total_steps=10, method="pactrain-fp16",
                         prune_start=0.0, prune_end=0.0)
    pruner = pt.tracker.pruner
    passes = []
    real = pruner.mask_gradients

    def counted() -> None:
        passes.append(pt.step)
        real()

    pruner.mask_gradients = counted
    _train(ddp, optimizer, rank, range(3), micro=2)
    pruned_grads_zero = all(bool((p.grad[~pruner.masks[n]] == 0).all())
                            for n, p in pruner.params.items())
    optimizer.zero_grad()
    x, y = torch.randn(8, 12), torch.randint(0, 4, (8,))
    nn.functional.cross_entropy(ddp(x), y).backward()        # keep DDP's reducer in step
    optimizer.step()
    nn.functional.cross_entropy(model(x), y).backward()      # bypasses DDP and its hook
    bypassed_nonzero = any(bool((p.grad[~pruner.masks[n]] != 0).any())
                           for n, p in pruner.params.items())
    optimizer.step()
    optimizer.zero_grad()
    nn.functional.cross_entropy(ddp(x), y).backward()        # the hook masks these ...
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()      # ... not these, which the step uses
    optimizer.step()
    return {"passes": passes, "pruned_grads_zero": pruned_grads_zero,
            "bypassed_nonzero": bypassed_nonzero,
            "after_bypass_zero": all(bool((p.grad[~pruner.masks[n]] == 0).all())
                                     for n, p in pruner.params.items()),
            "weights_zero": all(bool((p[~pruner.masks[n]] == 0).all())
                                for n, p in pruner.params.items())}


def test_gradients_the_hook_masked_are_not_masked_again() -> None:
    for result in run_on_local_group(_masks_once, 2):
        assert result["pruned_grads_zero"]
        assert result["bypassed_nonzero"]       # the direct backward left pruned entries
        assert result["passes"] == [4, 5]       # only the steps after a bypass masked
        assert result["after_bypass_zero"] and result["weights_zero"]
