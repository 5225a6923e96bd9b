"""`digits-cnn`: a small CNN on scikit-learn's bundled handwritten digits (8x8, 10 classes).

Real images that ship with scikit-learn, so accuracy is measured without any download.
The split, the batch stream and the evaluation are the shared digits task
(:mod:`pactrain.models.digits_task`); this module only adds the network. Its gradient is
small (0.15 MB), so it measures accuracy, not the link.
"""

from __future__ import annotations

import torch
from torch import nn

from pactrain.models import register_model
from pactrain.models.digits_task import digits_spec


class DigitsCNN(nn.Module):
    """Two 3x3 convolutions, one max-pool, two linear layers (about 38k parameters)."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(32 * 4 * 4, 64), nn.ReLU(), nn.Linear(64, 10),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x))


SPEC = register_model(digits_spec(
    "digits-cnn", DigitsCNN, default_batch_size=32, default_lr=0.05,
    description="small CNN on scikit-learn's bundled 8x8 digits (1348 train / 449 test)",
))
