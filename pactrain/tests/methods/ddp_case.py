"""One rank of a real gloo group running a tiny DDP model under a named method's hook.

Run as a script by the tests (one process per rank), for a list of cases
``[name, method, options, steps]`` in one process group:
``python ddp_case.py CASES_JSON RANK WORLD PORT OUT``.
The model's weights never change (no optimizer step), and each rank always sees the same
batch, so every step reduces the same gradients: what the hook returns per step, its
payload and its state can be compared with the exact mean.
"""

from __future__ import annotations

import json
import os
import sys

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from pactrain.methods import MethodConfig, get_method, register_hook


def model_and_batch(rank: int) -> tuple[nn.Module, torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 8))
    gen = torch.Generator().manual_seed(100 + rank)
    return model, torch.randn(1, 64, generator=gen), torch.randn(1, 8, generator=gen)


def run_case(method: str, options: dict, rank: int, world: int, steps: int) -> dict:
    """Train-free DDP steps of the tiny model under ``method``; what the hook produced."""
    model, x, y = model_and_batch(rank)
    options = dict(options)
    # A tiny bucket cap puts every parameter in its own bucket (several collectives in
    # flight per step: their order must agree on all ranks).
    cap = options.pop("_bucket_cap_mb", 25.0)
    # Gradients as views of the bucket: lets us map the hook's bucket layout to parameters.
    ddp = DistributedDataParallel(model, gradient_as_bucket_view=True, bucket_cap_mb=cap)
    comm = None
    if method != "none":
        config = MethodConfig(world_size=world, rank=rank, sparsity=0.8, seed=1,
                              options=options)
        comm = get_method(method).factory(None, ddp, config, None)
        register_hook(ddp, comm)
    grads = []
    for _ in range(steps):
        ddp.zero_grad(set_to_none=False)
        nn.functional.mse_loss(ddp(x), y).backward()
        grads.append(torch.cat([p.grad.flatten() for p in model.parameters()]).clone())
    result: dict = {"grads": torch.stack(grads)}
    if comm is not None:
        result["payload_per_step"] = comm.payload.bytes_per_step()
        result["summary"] = comm.summary()
        residuals = getattr(getattr(comm.state, "memory", None), "residuals", None)
        if residuals:  # per parameter name: laid out in the model's parameter order
            result["residual"] = torch.cat([
                residuals.get(name, torch.zeros(p.numel())).flatten()
                for name, p in model.named_parameters()
            ])
    # The exact local gradient (no communication).
    model.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    result["local"] = torch.cat([p.grad.flatten() for p in model.parameters()])
    return result


def main() -> None:
    cases, rank, world, port, out = sys.argv[1:6]
    rank_i, world_i = int(rank), int(world)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
    dist.init_process_group("gloo", rank=rank_i, world_size=world_i)
    results = {
        name: run_case(method, options, rank_i, world_i, steps)
        for name, method, options, steps in json.loads(cases)
    }
    torch.save(results, out)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
