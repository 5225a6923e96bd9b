"""The communicator on a real 2-process gloo group: what it sends, counts and times."""

from __future__ import annotations

import pickle
import time

import torch
import torch.distributed as dist

from pactrain.compression.communicator import Communicator
from pactrain.compression.compressors import SparseGradient, segment_bounds
from pactrain.compression.protocols import allgather_sparse, allreduce_ternary
from pactrain.train.local_group import run_on_local_group


def _talk(rank: int, world_size: int) -> dict:
    observed: list[tuple[int, float]] = []
    comm = Communicator(None, observer=lambda nbytes, s: observed.append((nbytes, s)))
    summed = comm.all_reduce(torch.full((3,), float(rank + 1))).wait()[0]
    largest = comm.all_reduce(torch.tensor([float(rank)]), "all_reduce_max",
                              dist.ReduceOp.MAX).wait()[0]
    gathered = [torch.empty(2, dtype=torch.int32) for _ in range(world_size)]
    comm.all_gather(gathered, torch.tensor([rank, 10 * rank], dtype=torch.int32)).wait()
    # a collective someone else launches: counted and timed, not observed
    comm.count(8)
    comm.timed(lambda: dist.all_reduce(torch.zeros(2), async_op=True).get_future()).wait()
    comm.end_step()
    sparse = SparseGradient(torch.tensor([1.0 + rank]), torch.tensor([rank]), 4)
    dense_sum = allgather_sparse(comm, sparse).wait()
    # zero draws: every non-zero entry is sent as its sign, so the sum is deterministic
    flat = torch.tensor([0.5, -1.0, 0.0, 2.0]) * (rank + 1)
    ternary = allreduce_ternary(comm, flat, segment_bounds([2, 2]), torch.zeros(4)).wait()
    comm.end_step()
    deadline = time.monotonic() + 5  # completion callbacks may run just after wait()
    while len(observed) < 6 and time.monotonic() < deadline:
        time.sleep(0.001)
    clone = pickle.loads(pickle.dumps(comm))
    return {"summed": summed, "largest": largest, "gathered": gathered,
            "observed": [n for n, _ in observed], "seconds": comm.collective_seconds,
            "busy": comm.busy_seconds,
            "per_step": comm.seconds_per_step(), "by": dict(comm.payload.by_collective),
            "dense_sum": dense_sum, "ternary": ternary,
            "clone": (clone.process_group, clone.observer, clone.payload.total_bytes)}


def test_communicator_launches_counts_and_times_every_collective() -> None:
    for rank, got in enumerate(run_on_local_group(_talk, 2)):
        assert got["summed"].tolist() == [3.0, 3.0, 3.0] and got["largest"].item() == 1.0
        assert [t.tolist() for t in got["gathered"]] == [[0, 0], [1, 10]]
        # 12 B sum + 4 B max + 8 B gather + sparse pairs 8 B + ternary 8 B scales, 4 B codes
        assert got["observed"] == [12, 4, 8, 8, 8, 4]
        assert got["by"] == {"all_reduce": 12 + 8 + 4, "all_reduce_max": 4 + 8,
                             "all_gather": 8 + 8}
        # busy time (each instant counted once) per step; the summed time is at least it
        assert 0 < got["busy"] <= got["seconds"] and got["per_step"] == got["busy"] / 2
        assert got["dense_sum"].tolist() == [1.0, 2.0, 0.0, 0.0]
        # scales MAX over ranks: 2 and 4; codes summed over 2 ranks: +-2, 0, 2
        assert got["ternary"].tolist() == [4.0, -4.0, 0.0, 8.0]
        assert got["clone"] == (None, None, 12 + 4 + 8 + 8 + 8 + 8 + 4), rank
