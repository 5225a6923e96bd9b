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


def build_optimizer(name: str, params: Iterable[torch.nn.Parameter], lr: float,
                    momentum: float, weight_decay: float) -> torch.optim.Optimizer:
    """``torch.optim.SGD`` (with ``momentum``) or ``torch.optim.AdamW`` (its default betas;
    ``momentum`` does not apply), both with ``weight_decay``."""
    check_optimizer(name)
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr, momentum=momentum, weight_decay=weight_decay)
    return torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)
