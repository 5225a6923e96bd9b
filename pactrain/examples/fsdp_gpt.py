"""PacTrain under FSDP2: a small GPT sharded with ``fully_shard``, pruned while it trains,
its gradient reduce-scatter and parameter all-gather carrying kept entries only.

Run it (2 processes on this machine, gloo on CPU):

    torchrun --standalone --nproc_per_node 2 pactrain/examples/fsdp_gpt.py

The model is wrapped as FSDP2 users write it: ``fully_shard`` on each transformer block,
then on the root. ``pactrain.attach`` takes the sharded model and its optimizer like a DDP
one. Run it again with ``--method dense`` for FSDP2's own collectives on the same pruning
schedule: the weights come out bit-equal (``--dump`` writes each rank's shards to compare),
and the JSON line shows each collective's bytes per step side by side.
"""

from __future__ import annotations

import argparse
import json

import torch
import torch.distributed as dist
from torch.distributed.fsdp import fully_shard

import pactrain
from pactrain.models import get_model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--sparsity", type=float, default=0.8)
    parser.add_argument("--method", default="pactrain",
                        help="pactrain or pactrain-fp32 (compacted), dense (FSDP2's own)")
    parser.add_argument("--dump", default=None,
                        help="save this rank's parameter shards to DUMP.rank<r>")
    args = parser.parse_args()

    dist.init_process_group("gloo")  # torchrun sets RANK, WORLD_SIZE, MASTER_ADDR/PORT
    rank, world_size = dist.get_rank(), dist.get_world_size()
    spec = get_model("gpt-tiny")
    model = spec.build(0)  # the same initial weights on every rank
    for block in model.blocks:
        fully_shard(block)
    fully_shard(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    pt = pactrain.attach(model, optimizer, sparsity=args.sparsity, total_steps=args.steps,
                         method=args.method, prune_start=0.0, prune_end=0.5)

    for inputs, targets in spec.batches(rank, world_size, 8, 0):
        if pt.step >= args.steps:
            break
        optimizer.zero_grad()
        loss = spec.loss(model(inputs), targets)
        loss.backward()
        optimizer.step()

    summary = pt.summary()
    if args.dump:
        torch.save({name: p.to_local().detach().clone() for name, p in model.named_parameters()},
                   f"{args.dump}.rank{rank}")
    for turn in range(world_size):  # one line per rank, in rank order
        if turn == rank:
            print(json.dumps({
                "rank": rank, "world_size": world_size, "method": args.method,
                "steps": pt.step, "final_loss": float(loss.detach()), "density": summary["density"],
                "reduce_scatter_share": summary["reduce_scatter_share"],
                "all_gather_share": summary["all_gather_share"],
                "bytes_per_step": summary["bytes_per_step_by_collective"],
                "control_bytes_per_step": summary["control_bytes_per_step"],
                "control_by_collective": pt.method.state.comm.control.by_collective,
            }), flush=True)
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
