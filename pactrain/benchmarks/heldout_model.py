"""A held-out model for the adaptive policy's check (issue 48): not in ``pactrain.models``.

The operating point's rules (:class:`pactrain.operating_point.Rules`) were measured on
``fashion-cnn``; a model the rules never saw shows whether they carry over. This one
differs in kind: no convolution, three linear layers with the gradient spread over two
large matrices (784x1024 and 1024x256) instead of one, and a compute per step about a
twentieth of fashion-cnn's, so the link dominates even harder.

``fashion-mlp``: 784 -> 1024 -> 256 -> 10 with ReLU, 1,068,810 parameters (4.28 MB of
fp32 gradient a step), on Fashion-MNIST (the same data and evaluation as ``fashion-cnn``),
SGD lr 0.05 momentum 0.9 at batch 32 per worker (fashion-cnn's, not tuned for this model).

Used through ``$PACTRAIN_MODEL_MODULES`` (the way a user brings a model of their own)::

    sudo .venv/bin/python pactrain/benchmarks/adaptive_race.py \\
        --model-module pactrain/benchmarks/heldout_model.py --model fashion-mlp ...
"""

from __future__ import annotations

from torch import nn

from pactrain.data import fashion_mnist
from pactrain.models import MODELS, register_model
from pactrain.models.image_task import image_spec

NAME = "fashion-mlp"


def fashion_mlp() -> nn.Module:
    """Flatten, 784 -> 1024 -> 256 -> 10 with ReLU."""
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 1024), nn.ReLU(),
                         nn.Linear(1024, 256), nn.ReLU(), nn.Linear(256, 10))


if NAME not in MODELS:
    register_model(image_spec(
        NAME, fashion_mlp, split=fashion_mnist.load_split, default_lr=0.05,
        default_batch_size=32, check_data=fashion_mnist.check_available,
        description="MLP 784-1024-256-10 (1.07 M parameters) on Fashion-MNIST; held out of "
                    "pactrain.models for the adaptive policy's check",
        extra={"parameters": 1_068_810},
    ))
