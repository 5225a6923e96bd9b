"""`digits-cnn`: a small CNN on scikit-learn's bundled handwritten digits (8x8, 10 classes).

Real images that ship with scikit-learn, so accuracy is measured without any download.
The train/test split is fixed (seeded permutation, 25% held out) and independent of the
run's seed, so accuracies of different runs are comparable.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import torch
from torch import nn

from pactrain.models import Batch, ModelSpec, register_model

#: Seed of the fixed train/test split (not the run's seed: every run sees the same split).
SPLIT_SEED = 20250524
TEST_FRACTION = 0.25


def load_split() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Return ``(x_train, y_train, x_test, y_test)``; images scaled to [0, 1], shape (n,1,8,8)."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = torch.as_tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
    labels = torch.as_tensor(digits.target, dtype=torch.int64)
    order = torch.as_tensor(np.random.RandomState(SPLIT_SEED).permutation(len(labels)))
    n_test = round(TEST_FRACTION * len(labels))
    test, train = order[:n_test], order[n_test:]
    return images[train], labels[train], images[test], labels[test]


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


def build(seed: int) -> nn.Module:
    """The CNN with weights drawn from a generator seeded by ``seed`` (same on every rank)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return DigitsCNN()


def batches(
    rank: int, world_size: int, batch_size: int, seed: int, start_step: int = 0,
) -> Iterator[Batch]:
    """Endless per-rank batches: each epoch is a seeded permutation of the training set,
    cut into global batches of ``batch_size * world_size``; rank ``r`` takes the ``r``-th
    slice. Step ``k`` of the stream depends only on (seed, k), which makes resume exact."""
    x_train, y_train, _, _ = load_split()
    global_batch = batch_size * world_size
    per_epoch = len(y_train) // global_batch
    if per_epoch == 0:
        raise ValueError(
            f"global batch {global_batch} exceeds the {len(y_train)} training images; "
            "lower --batch-size or --workers"
        )
    step = start_step
    while True:
        epoch, index = divmod(step, per_epoch)
        generator = torch.Generator().manual_seed(seed * 1_000_003 + epoch)
        order = torch.randperm(len(y_train), generator=generator)
        start = index * global_batch + rank * batch_size
        take = order[start:start + batch_size]
        yield x_train[take], y_train[take]
        step += 1


def loss(outputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Cross-entropy over the 10 digit classes."""
    return nn.functional.cross_entropy(outputs, targets)


@torch.no_grad()
def evaluate(model: nn.Module) -> dict[str, float]:
    """Accuracy and loss on the fixed held-out split."""
    _, _, x_test, y_test = load_split()
    was_training = model.training
    model.eval()
    logits = model(x_test)
    model.train(was_training)
    return {
        "test_accuracy": float((logits.argmax(1) == y_test).float().mean()),
        "test_loss": float(nn.functional.cross_entropy(logits, y_test)),
    }


SPEC = register_model(ModelSpec(
    name="digits-cnn",
    build=build,
    batches=batches,
    loss=loss,
    evaluate=evaluate,
    primary_metric="test_accuracy",
    higher_is_better=True,
    default_batch_size=32,
    default_lr=0.05,
    description="small CNN on scikit-learn's bundled 8x8 digits (1347 train / 450 test)",
))
