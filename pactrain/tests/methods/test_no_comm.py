"""The compute-floor method sends nothing and leaves each rank its own gradient."""

import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from pactrain.methods import MethodConfig, get_method, register_hook
from pactrain.train.local_group import run_on_local_group


def _local_gradients(rank: int, world_size: int) -> dict:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    ddp = DistributedDataParallel(model, bucket_cap_mb=0.0001)
    method = get_method("no-comm").factory(None, ddp, MethodConfig(world_size, rank), None)
    register_hook(ddp, method)
    x = torch.full((3, 4), float(rank + 1))
    ddp(x).sum().backward()
    expected = torch.autograd.grad(model(x).sum(), list(model.parameters()))
    return {"same_as_local": all(torch.equal(p.grad, g)
                                 for p, g in zip(model.parameters(), expected, strict=True)),
            "bytes": method.payload.total_bytes, "steps": method.payload.steps,
            "grad": model[0].weight.grad.clone()}


def test_no_comm_keeps_local_gradients_and_sends_nothing() -> None:
    results = run_on_local_group(_local_gradients, 2)
    for result in results:
        assert result["same_as_local"] and result["bytes"] == 0 and result["steps"] == 1
    assert not torch.equal(results[0]["grad"], results[1]["grad"])  # never averaged
