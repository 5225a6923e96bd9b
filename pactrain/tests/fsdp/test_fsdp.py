"""PacTrain under FSDP2: real fully_shard models on real gloo groups.

What must hold: the sharded masks rank weights as the unsharded pruner does (without any
rank holding a full tensor); the compacted collectives carry the kept entries only and
leave the weights bit-equal to FSDP2's own collectives on the same pruned model; a resumed
run continues identically; methods without an FSDP2 form are refused by name.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.fsdp import fully_shard

import pactrain
from pactrain.attached import AttachError
from pactrain.compression.communicator import Communicator
from pactrain.fsdp.layout import ShardedParam, ShardLayout, pack_bits, unpack_bits
from pactrain.fsdp.sharded_pruning import ShardedPruner
from pactrain.models import get_model
from pactrain.pruning import GradualPruner, PruningConfig
from pactrain.train.launch import free_port
from pactrain.train.local_group import run_on_local_group

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_packed_bits_round_trip_and_layout_slots() -> None:
    flags = torch.rand(1001, generator=torch.Generator().manual_seed(0)) < 0.3
    packed = pack_bits(flags)
    assert packed.numel() == 126 and torch.equal(unpack_bits(packed, 1001), flags)
    weight = nn.Parameter(torch.zeros(3, 2))
    layout = ShardLayout([ShardedParam(weight, 6, 6)], world_size=2, rank=1)
    grid = torch.tensor([[1, 0, 1, 1, 0, 0], [0, 1, 0, 0, 0, 0]], dtype=torch.bool)
    layout.rebuild(grid)
    assert layout.kept_per_row == [3, 1] and layout.width == 3
    assert torch.equal(layout.grid(), grid)
    assert layout.slots().tolist() == [[True, True, True], [True, False, False]]
    assert layout.kept_share() == pytest.approx(6 / 12)


def _tied_model(ties: bool = True) -> nn.Module:
    """Uneven rows (33 and 7 do not divide by 2) and, with ``ties``, many equal magnitudes."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(12, 33), nn.ReLU(), nn.Linear(33, 7), nn.ReLU(),
                          nn.Linear(7, 4))
    with torch.no_grad():
        if not ties:
            return model
        for layer in model:
            if isinstance(layer, nn.Linear):
                layer.weight.copy_((layer.weight * 20).round() / 20)
    return model


def _sharded_masks(rank: int, world_size: int, scope: str, sparsity: float,
                   ties: bool = True) -> dict:
    """The sharded pruner's masks, gathered whole, and the unsharded pruner's."""
    reference = GradualPruner(_tied_model(ties), PruningConfig(scope=scope))
    reference.update_masks(sparsity)
    model = _tied_model(ties)
    for layer in model:
        if isinstance(layer, nn.Linear):
            fully_shard(layer)
    fully_shard(model)
    pruner = ShardedPruner(model, PruningConfig(scope=scope), None, Communicator(),
                           rank, world_size)
    changed = pruner.update_masks(sparsity)
    whole = {}
    for name, p in pruner.params.items():
        rows = -(-p.shape[0] // world_size)
        local = torch.zeros(rows, *p.shape[1:], dtype=torch.uint8)
        local[:pruner.masks[name].shape[0]] = pruner.masks[name].to(torch.uint8)
        gathered = torch.empty(world_size * rows, *p.shape[1:], dtype=torch.uint8)
        dist.all_gather_into_tensor(gathered, local)
        whole[name] = gathered[:p.shape[0]].bool()
    return {"changed": changed, "sharded": whole, "reference": reference.masks,
            "density": pruner.density(), "reference_density": reference.density()}


@pytest.mark.parametrize("scope", ["layer", "global"])
def test_sharded_masks_are_the_unsharded_rankings_masks(scope: str) -> None:
    for result in run_on_local_group(_sharded_masks, 2, scope, 0.6):
        assert result["changed"]
        for name, mask in result["reference"].items():
            assert torch.equal(result["sharded"][name], mask), name
        assert result["density"] == pytest.approx(result["reference_density"])


def test_sharded_lamp_allocation_is_lamps_up_to_the_bin_width() -> None:
    first, second = run_on_local_group(_sharded_masks, 2, "lamp", 0.8, False)
    assert all(torch.equal(first["sharded"][n], second["sharded"][n]) for n in first["sharded"])
    total = sum(m.numel() for m in first["reference"].values())
    pruned = {n: m.numel() - int(m.sum()) for n, m in first["sharded"].items()}
    expected = {n: m.numel() - int(m.sum()) for n, m in first["reference"].items()}
    assert sum(pruned.values()) == sum(expected.values()) == int(0.8 * total)
    for name, count in pruned.items():  # each layer within 3% of its weights (or 2)
        assert abs(count - expected[name]) <= max(2.0, 0.03 * first["reference"][name].numel())
    # and each layer loses its smallest weights: no kept |w| below a pruned one
    model = _tied_model(False)
    for name, mask in first["sharded"].items():
        weight = dict(model.named_parameters())[name].detach().abs()
        if (~mask).any() and mask.any():
            assert float(weight[~mask].max()) <= float(weight[mask].min())


def _gpt(method: str, steps: range, state: dict | None = None) -> dict:
    """gpt-tiny under fully_shard (blocks, then root) + attach, trained over ``steps``."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    spec = get_model("gpt-tiny")
    model = spec.build(0)
    for block in model.blocks:
        fully_shard(block)
    fully_shard(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    if state is not None:
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
    pt = pactrain.attach(model, optimizer, sparsity=0.8, total_steps=12, method=method,
                         prune_start=0.0, prune_end=0.5,
                         state=None if state is None else state["pactrain"][rank])
    last: dict[str, int] = {}
    losses = []
    batches = spec.batches(rank, world_size, 8, 0, start_step=steps.start)
    for _, (inputs, targets) in zip(steps, batches, strict=False):
        before = dict(pt.method.payload.by_collective)
        optimizer.zero_grad()
        loss = spec.loss(model(inputs), targets)
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
        last = {k: v - before.get(k, 0) for k, v in pt.method.payload.by_collective.items()}
    return {"shards": {n: p.to_local().detach().clone() for n, p in model.named_parameters()},
            "summary": pt.summary(), "last_step_bytes": last, "losses": losses,
            "pruned_zero": all(bool((p.to_local()[~m] == 0).all())
                               for p, m in ((pt.tracker.pruner.params[n], m)
                                            for n, m in pt.tracker.pruner.masks.items())),
            "state": {"model": copy.deepcopy(model.state_dict()),
                      "optimizer": copy.deepcopy(optimizer.state_dict()),
                      "pactrain": pt.state_dict()}}


def _compacted_and_dense(rank: int, world_size: int) -> dict:
    refused = ""
    try:
        probe = get_model("gpt-tiny").build(0)
        fully_shard(probe)
        pactrain.attach(probe, torch.optim.SGD(probe.parameters(), lr=0.1), total_steps=5,
                        method="powersgd")
    except AttachError as exc:
        refused = str(exc)
    compacted = _gpt("pactrain", range(12))
    dense = _gpt("dense", range(12))
    for run in (compacted, dense):
        run.pop("state")
    return {"refused": refused, "compacted": compacted, "dense": dense}


def test_fsdp_compacted_collectives_are_bit_equal_and_carry_kept_entries_only() -> None:
    for result in run_on_local_group(_compacted_and_dense, 2, timeout_s=300):
        assert "no FSDP2 form" in result["refused"] and "dense" in result["refused"]
        compacted, dense = result["compacted"], result["dense"]
        for name, shard in dense["shards"].items():
            assert torch.equal(compacted["shards"][name], shard), name
        assert compacted["losses"] == dense["losses"]
        assert compacted["pruned_zero"] and compacted["summary"]["density"] == pytest.approx(0.2)
        assert compacted["losses"][-1] < compacted["losses"][0]
        # the last step runs on the final masks: each collective carries its share
        summary, last, full = compacted["summary"], compacted["last_step_bytes"], \
            dense["last_step_bytes"]
        # (blocks are gathered twice a step, for forward and backward, the root once, so
        # the all-gather's ratio weighs modules unlike the summary's share)
        assert summary["all_gather_share"] <= 0.25
        assert 0.2 <= last["all_gather"] / full["all_gather"] <= 0.25
        assert last["reduce_scatter"] == pytest.approx(summary["reduce_scatter_share"]
                                                       * full["reduce_scatter"], rel=1e-6)
        assert summary["reduce_scatter_share"] < 0.3
        assert summary["control_bytes_per_step"] > 0  # the agreements are counted


def _resume(rank: int, world_size: int) -> dict:
    whole = _gpt("pactrain", range(12))
    first = _gpt("pactrain", range(6))
    states = [None] * world_size
    dist.all_gather_object(states, first["state"]["pactrain"])
    first["state"]["pactrain"] = states
    second = _gpt("pactrain", range(6, 12), state=first["state"])
    return {"whole": whole["shards"], "resumed": second["shards"],
            "steps": second["summary"]["step"]}


def test_fsdp_resumed_run_continues_identically() -> None:
    for result in run_on_local_group(_resume, 2, timeout_s=300):
        assert result["steps"] == 12
        for name, shard in result["whole"].items():
            assert torch.equal(result["resumed"][name], shard), name


def test_fsdp_example_runs_as_a_user_would(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "1",
               "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
               "--master_port", str(free_port()), str(EXAMPLES / "fsdp_gpt.py"),
               "--steps", "8", "--dump", str(tmp_path / "shards")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "OMP_NUM_THREADS": "1"}, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert [line["rank"] for line in lines] == [0, 1]
    for line in lines:
        assert line["steps"] == 8 and line["density"] == pytest.approx(0.2)
        assert line["all_gather_share"] <= 0.25 and line["reduce_scatter_share"] < 0.3
        assert set(line["bytes_per_step"]) == {"all_gather", "reduce_scatter"}
        shards = torch.load(tmp_path / f"shards.rank{line['rank']}")
        zeros = sum(int((shard == 0).sum()) for shard in shards.values())
        assert zeros > 0.7 * sum(shard.numel() for shard in shards.values())


def _pactrain(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pactrain.cli", *args], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "COLUMNS": "400"})


def test_pactrain_train_fsdp_resumes_to_the_same_model(tmp_path: Path) -> None:
    common = ("train", "--model", "gpt-tiny", "--fsdp", "--steps", "6", "--workers", "2")
    whole = _pactrain(*common, "--json", str(tmp_path / "whole.json"))
    assert whole.returncode == 0, whole.stderr[-3000:]
    half = _pactrain(*common, "--stop-after", "3", "--checkpoint", str(tmp_path / "ck.pt"))
    assert half.returncode == 0, half.stderr[-3000:]
    resumed = _pactrain(*common, "--resume", str(tmp_path / "ck.pt"),
                        "--json", str(tmp_path / "resumed.json"))
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    first, second = (json.loads((tmp_path / f"{n}.json").read_text())
                     for n in ("whole", "resumed"))
    assert second["start_step"] == 3 and second["mask_consistent"]
    assert second["final_test_loss"] == first["final_test_loss"]
    assert first["density"] == pytest.approx(0.2)
    shares = first["method_summary"]
    assert shares["fsdp"] and shares["all_gather_share"] <= 0.25
    refused = _pactrain(*common, "--method", "powersgd")
    assert refused.returncode == 2 and "no FSDP2 form" in refused.stderr
