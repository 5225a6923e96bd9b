"""Fashion-MNIST models: ``fashion-cnn`` and ``fashion-resnet18``, on the official split.

Why these two: they make the link matter in two regimes on a real task (gradient bytes
against compute per step: ``benchmarks/model_costs.py`` prints both for any model):

- ``fashion-cnn`` (the CNN of the team's spec: conv3x3(32)-pool-conv3x3(64)-pool-
  linear(3136,1024)-linear(1024,10), 3,241,354 parameters, 12.97 MB of fp32 gradient per
  step): its gradient is almost all one linear layer, the textbook case for pruning. On
  the 2-core development machine, 4 workers at batch 32 compute a step in 0.224 s (the
  race's ``no-comm`` row) while a dense ring all-reduce of its gradient takes 1.56 s at
  100 Mbit/s: the link dominates 7 to 1.
- ``fashion-resnet18`` (ImageNet ResNet-18 with a 1-channel stem and a 10-way head,
  11,175,370 parameters, 44.70 MB per step): a deep conv net whose gradient is spread
  over 20 layers, with batch norm (not raced yet).

Both are evaluated on all 10,000 test images. The data is read by
:mod:`pactrain.data.fashion_mnist`; a missing dataset is reported before any worker
starts (``check_data``).
"""

from __future__ import annotations

import torch
from torch import nn

from pactrain.data import fashion_mnist
from pactrain.models import register_model
from pactrain.models.image_task import image_spec
from pactrain.models.resnet import ResNet18


class FashionCNN(nn.Module):
    """Two 3x3 conv + max-pool stages, a 3136->1024 linear layer, a 10-way head."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(64 * 7 * 7, 1024), nn.ReLU(), nn.Linear(1024, 10),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x))


def _split() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    return fashion_mnist.load_split()


#: Why lr 0.05 at batch 32 per worker (global 128 on 4 workers): the team's measurement of
#: this CNN alone at batch 128, SGD momentum 0.9, lr 0.05 (84% at step 100, 89.9% at
#: 1,200) is the reference the race compares against.
CNN = register_model(image_spec(
    "fashion-cnn", FashionCNN, split=_split, default_lr=0.05, default_batch_size=32,
    check_data=fashion_mnist.check_available,
    description="CNN (3.24 M parameters, one 3136x1024 linear layer) on Fashion-MNIST "
                "(60,000 train / 10,000 test)",
    extra={"parameters": 3_241_354},
))

RESNET = register_model(image_spec(
    "fashion-resnet18", lambda: ResNet18(num_classes=10, in_channels=1), split=_split,
    default_lr=0.02, default_batch_size=32, check_data=fashion_mnist.check_available,
    description="ResNet-18 (11.18 M parameters, 1-channel stem) on Fashion-MNIST at 28x28",
    extra={"parameters": 11_175_370},
))
