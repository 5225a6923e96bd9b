"""The optimizer a run trains with: SGD with momentum (the default) or AdamW.

Why both: the image models here are trained with SGD and momentum, as their reference
recipes are; transformers are trained with AdamW almost everywhere (GPT-2, nanoGPT,
Hugging Face's ``Trainer`` default). Which one a run uses changes what a compressor's
error does to learning: AdamW divides each coordinate by its running RMS, so a compressor
that biases a coordinate's scale (low rank, top-k) is not averaged out the way SGD's
linear update averages it (1-bit Adam, Tang et al., ICML 2021, section 3). A race of
language models is only telling under the optimizer people would use.

PacTrain needs nothing optimizer-specific: :meth:`pactrain.pruning.GradualPruner` zeroes
every optimizer-state tensor shaped like a pruned weight (SGD's momentum buffer, AdamW's
two moments), and a pruned entry's gradient is zero, so AdamW's update there is zero too.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch

from pactrain.names import check_optimizer


def default_lr(optimizer: str, sgd_lr: float, adamw_lr: float) -> float:
    """The learning rate a run uses when it names none: the model's for that optimizer."""
    check_optimizer(optimizer)
    return sgd_lr if optimizer == "sgd" else adamw_lr


#: Devices with a fused SGD kernel in torch 2.13 (``torch.optim.SGD(fused=True)``).
FUSED_SGD_DEVICES = frozenset({"cpu", "cuda"})


def build_optimizer(name: str, params: Iterable[torch.nn.Parameter], lr: float,
                    momentum: float, weight_decay: float) -> torch.optim.Optimizer:
    """``torch.optim.SGD`` (with ``momentum``) or ``torch.optim.AdamW`` (its default betas;
    ``momentum`` does not apply), both with ``weight_decay``.

    SGD runs its fused kernel where every parameter's device has one: on CPU, torch's
    default is a Python loop over the parameters (``foreach`` is a CUDA default only), which
    took 12.3 ms a step on fashion-resnet18 against the fused kernel's 7.7 ms (one thread),
    and on a CPU-bound worker every millisecond is the step's (the 10 Mbit/s race's packed
    entrant stepped 2.3% faster). The fused kernel does the same update but does not always
    round as the loop does: bit-identical on digits-cnn (4 steps) and in a 25-step packed
    run, yet four-worker PowerSGD runs and the race's curves moved (docs/pactrain-core.md,
    "Optimizer"). Every run of this code still repeats and resumes bit-identically, and
    ``pactrain-fp32`` still equals ``dense``; results recorded before the switch are not
    reproduced step for step. AdamW keeps torch's default kernel: its fused one differs by
    2e-7 after five steps on random tensors.
    """
    check_optimizer(name)
    params = list(params)
    if name == "sgd":
        # DTensor parameters (FSDP2) have no sharding rule for the fused kernel (torch 2.13:
        # "aten._fused_sgd_.default does not have a sharding strategy registered")
        fused = all(p.device.type in FUSED_SGD_DEVICES and p.is_floating_point()
                    and not hasattr(p, "to_local") for p in params) or None
        return torch.optim.SGD(params, lr=lr, momentum=momentum, weight_decay=weight_decay,
                               fused=fused)
    return torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)
