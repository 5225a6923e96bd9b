"""PacTrain in your own loop: a complete torchrun script.

Run it (2 processes on this machine, gloo on CPU):

    torchrun --standalone --nproc_per_node 2 pactrain/examples/torchrun_minimal.py

Your model, your data, your loop and a plain ``torch.optim`` optimizer; PacTrain is the
one ``pactrain.attach`` line. It prunes the conv/linear weights to ``--sparsity`` along
the way, keeps the masks identical on every rank, and sends only the kept gradient entries
(compacted, with the adaptive tier per bucket). At the end every rank prints one JSON
line: the held-out accuracy, the density reached and the bytes it handed to all-reduce
per step, against what dense DDP would send.
"""

from __future__ import annotations

import argparse
import json

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

import pactrain
from pactrain.data.digits import load_split


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--sparsity", type=float, default=0.8)
    parser.add_argument("--method", default="pactrain")
    parser.add_argument("--checkpoint", default=None, help="save PacTrain's state here")
    args = parser.parse_args()

    dist.init_process_group("gloo")  # torchrun sets RANK, WORLD_SIZE, MASTER_ADDR/PORT
    rank, world_size = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)  # the same initial weights on every rank
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                          nn.Linear(256, 10))
    ddp = DistributedDataParallel(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    pt = pactrain.attach(ddp, optimizer, sparsity=args.sparsity, total_steps=args.steps,
                         method=args.method)

    x, y, x_test, y_test = (t.flatten(1) if t.dim() > 1 else t for t in load_split())
    x, y = x[rank::world_size], y[rank::world_size]  # each rank trains on its own shard
    generator = torch.Generator().manual_seed(rank)
    for _ in range(args.steps):
        batch = torch.randint(0, len(y), (32,), generator=generator)
        optimizer.zero_grad()
        nn.functional.cross_entropy(ddp(x[batch]), y[batch]).backward()
        optimizer.step()

    model.eval()
    with torch.no_grad():
        accuracy = (model(x_test).argmax(1) == y_test).float().mean().item()
    if args.checkpoint:
        torch.save({"model": model.state_dict(), "pactrain": pt.state_dict()},
                   f"{args.checkpoint}.rank{rank}")
    zero_weights = sum(int((m.weight == 0).sum()) for m in model if isinstance(m, nn.Linear))
    summary = pt.summary()
    # one line per rank, in rank order (concurrent prints would interleave)
    for turn in range(world_size):
        if turn == rank:
            print(json.dumps({
                "rank": rank, "world_size": world_size, "steps": pt.step, "test_accuracy": accuracy,
                "density": summary["density"], "zero_weights": zero_weights,
                "payload_bytes_per_step": summary["payload_bytes_per_step"],
                "tier_counts": summary.get("tier_counts"),
                "weights_sum": float(sum(p.detach().double().sum() for p in model.parameters())),
            }), flush=True)
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
