"""The two-level all-reduce: inside each node, then among the nodes' leaders, then back;
real gloo groups, real training runs."""

from __future__ import annotations

import pytest
import torch
import torch.distributed as dist

from pactrain.compression.hierarchical import HierarchicalCommunicator
from pactrain.train.config import RunConfig
from pactrain.train.launch import run_training
from pactrain.train.local_group import run_on_local_group


def _reduce_many(rank: int, world_size: int) -> dict:
    apart = dist.new_group(list(range(world_size)))
    comm = HierarchicalCommunicator(None, workers_per_node=2, apart=(apart,))
    futures = [comm.all_reduce(torch.full((5,), float(rank + 10 * k))) for k in range(6)]
    largest = comm.all_reduce(torch.tensor([float(rank)]), op=dist.ReduceOp.MAX, group=apart)
    sums = [future.wait()[0].tolist() for future in futures]
    top = largest.wait()[0].item()
    comm.close()
    return {"sums": sums, "max": top, "cross_node": comm.cross_node.total_bytes,
            "payload": comm.payload.total_bytes, "leader": comm.leader}


def test_hierarchical_all_reduce_sums_in_order_and_only_leaders_cross() -> None:
    results = run_on_local_group(_reduce_many, 4)
    for rank, result in enumerate(results):
        assert result["sums"] == [[6.0 + 40 * k] * 5 for k in range(6)]
        assert result["max"] == 3.0
        assert result["payload"] == 6 * 5 * 4 + 4  # what the hook handed over, as flat
        assert result["leader"] == 2 * (rank // 2)
        # only a node's leader sends across nodes, the same bytes
        assert result["cross_node"] == (result["payload"] if rank % 2 == 0 else 0)


def test_hierarchical_refuses_nodes_of_unequal_size() -> None:
    def build(rank: int, world_size: int) -> str:
        try:
            HierarchicalCommunicator(None, workers_per_node=3)
        except ValueError as exc:
            return str(exc)
        return ""

    assert all("do not split" in message for message in run_on_local_group(build, 4))


def _run(method: str, nodes: int, **options: int) -> dict:
    return run_training(RunConfig(model="digits-cnn", method=method, workers=4, nodes=nodes,
                                  steps=8, warmup_steps=2, probe_link=False,
                                  method_options=dict(options)), progress=False)


def test_two_level_training_matches_the_flat_one() -> None:
    flat = _run("pactrain-fp32", 1)
    # pactrain-hier* take their nodes from the launcher's LOCAL_WORLD_SIZE, as from torchrun
    two_level = _run("pactrain-hier-fp32", 2)
    assert two_level["method_summary"]["workers_per_node"] == 2
    assert two_level["final_train_loss"] == pytest.approx(flat["final_train_loss"], rel=1e-3)
    assert two_level["payload_bytes_per_step"] == flat["payload_bytes_per_step"]
    assert two_level["density"] == pytest.approx(flat["density"])
    # the adaptive tiers agree their scales on a channel of their own: no reordering
    hier = _run("pactrain-hier", 2)
    assert hier["mask_consistent"] and hier["method_summary"]["workers_per_node"] == 2
    # rank 0 leads node 0: everything it hands over crosses the nodes, once
    assert hier["method_summary"]["cross_node_bytes_per_step"] == pytest.approx(
        sum(hier["payload_by_collective_per_step"].values()), rel=1e-6)
