"""PacTrain under Hugging Face Accelerate: ``pactrain.attach`` on what ``prepare`` returns.

Run it with 2 CPU processes (either launcher works):

    torchrun --standalone --nproc_per_node 2 pactrain/examples/accelerate_loop.py
    accelerate launch --cpu --num_processes 2 pactrain/examples/accelerate_loop.py

``accelerator.prepare`` wraps the model in DDP and the optimizer in an
``AcceleratedOptimizer``; ``pactrain.attach`` takes both as they are. Every rank prints one
JSON line at the end.
"""

from __future__ import annotations

import argparse
import json

import torch
from accelerate import Accelerator
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pactrain
from pactrain.data.digits import load_split


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--sparsity", type=float, default=0.8)
    parser.add_argument("--method", default="pactrain",
                        help="pactrain (adaptive tiers) or a fixed tier, e.g. pactrain-fp16")
    args = parser.parse_args()

    accelerator = Accelerator(cpu=True)
    torch.manual_seed(0)
    x, y, x_test, y_test = load_split()
    model = nn.Sequential(nn.Flatten(), nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256),
                          nn.ReLU(), nn.Linear(256, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)
    ddp, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    pt = pactrain.attach(ddp, optimizer, sparsity=args.sparsity, total_steps=args.steps,
                         method=args.method)

    step = 0
    while step < args.steps:
        for inputs, targets in loader:
            optimizer.zero_grad()
            accelerator.backward(nn.functional.cross_entropy(ddp(inputs), targets))
            optimizer.step()
            step += 1
            if step == args.steps:
                break
    model.eval()
    with torch.no_grad():
        accuracy = (model(x_test).argmax(1) == y_test).float().mean().item()
    summary = pt.summary()
    zero = sum(int((m.weight == 0).sum()) for m in model if isinstance(m, nn.Linear))
    # one line per rank, in rank order (concurrent prints would interleave)
    for turn in range(accelerator.num_processes):
        if turn == accelerator.process_index:
            print(json.dumps({"rank": accelerator.process_index,
                              "world_size": accelerator.num_processes, "steps": summary["step"],
                              "test_accuracy": accuracy, "density": summary["density"],
                              "zero_weights": zero,
                              "payload_bytes_per_step": summary["payload_bytes_per_step"],
                              "weights_sum": float(sum(p.detach().double().sum()
                                                       for p in model.parameters()))}), flush=True)
        accelerator.wait_for_everyone()


if __name__ == "__main__":
    main()
