"""The optimizers a run builds: SGD's fused kernel takes torch's loop's steps."""

from __future__ import annotations

import pytest
import torch

from pactrain.models import get_model
from pactrain.train.optimizers import build_optimizer


def _train(optimizer_of, steps: int = 4) -> list[torch.Tensor]:
    """Train digits-cnn for ``steps`` steps on its first batches; return the weights."""
    spec = get_model("digits-cnn")
    model = spec.build(0)
    optimizer = optimizer_of(model.parameters())
    batches = spec.batches(rank=0, world_size=1, batch_size=16, seed=0)
    for _ in range(steps):
        inputs, targets = next(batches)
        optimizer.zero_grad()
        spec.loss(model(inputs), targets).backward()
        optimizer.step()
    return [p.detach().clone() for p in model.parameters()]


@pytest.mark.parametrize("weight_decay", [0.0, 5e-4])
def test_sgd_is_fused_on_cpu_and_takes_the_loops_steps(weight_decay: float) -> None:
    built = build_optimizer("sgd", [torch.nn.Parameter(torch.zeros(3))], lr=0.1,
                            momentum=0.9, weight_decay=weight_decay)
    assert built.param_groups[0]["fused"] is True

    fused = _train(lambda params: build_optimizer("sgd", params, lr=0.05, momentum=0.9,
                                                  weight_decay=weight_decay))
    loop = _train(lambda params: torch.optim.SGD(params, lr=0.05, momentum=0.9,
                                                 weight_decay=weight_decay, foreach=False))
    # The same update to within rounding: the fused kernel does not always round as the
    # loop does (docs/pactrain-core.md, "Optimizer"), so no bit-for-bit claim is made.
    assert all(torch.allclose(a, b, rtol=0, atol=1e-6) for a, b in zip(fused, loop, strict=True))
    untrained = next(get_model("digits-cnn").build(0).parameters())
    assert not torch.equal(fused[0], untrained)  # the steps moved the weights


def test_adamw_keeps_torchs_default_kernel() -> None:
    built = build_optimizer("adamw", [torch.nn.Parameter(torch.zeros(3))], lr=1e-3,
                            momentum=0.9, weight_decay=0.01)
    assert not built.param_groups[0]["fused"]
