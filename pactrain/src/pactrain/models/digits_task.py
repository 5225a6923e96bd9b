"""The digit-classification task every image model shares: one split, stream and evaluation.

Why one place: ``digits-cnn``, ``resnet18`` and ``vit-tiny`` differ only in their network
and in how they see an image (8x8 grey, or 32x32 colour); the training stream, the loss
and the held-out evaluation must be the same for all of them, so their accuracies compare
and a resumed run of any of them is exact. The data itself is in
:mod:`pactrain.data.digits`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch import nn

from pactrain.data.digits import Augment, load_split, shard_batches
from pactrain.models import Batch, ModelSpec

View = Callable[[torch.Tensor], torch.Tensor]


def native(images: torch.Tensor) -> torch.Tensor:
    """The 8x8 grey images as they are (the view of ``digits-cnn``)."""
    return images


@torch.no_grad()
def classification_metrics(
    model: nn.Module, images: torch.Tensor, labels: torch.Tensor,
) -> dict[str, float]:
    """Accuracy and cross-entropy of ``model`` on ``images``, in eval mode (batch norm uses
    its running statistics); the model's previous mode is restored afterwards."""
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device  # the data lives on the CPU
    images, labels = images.to(device), labels.to(device)
    try:
        logits = model(images)
    finally:
        model.train(was_training)
    return {
        "test_accuracy": float((logits.argmax(1) == labels).float().mean()),
        "test_loss": float(nn.functional.cross_entropy(logits, labels)),
    }


def digits_spec(
    name: str, network: Callable[[], nn.Module], *, view: View = native,
    augment: Augment | None = None, default_lr: float, default_batch_size: int,
    description: str, extra: dict[str, Any] | None = None,
) -> ModelSpec:
    """A :class:`ModelSpec` training ``network()`` on the digits as ``view`` shows them.

    ``augment`` (e.g. :func:`pactrain.data.digits.random_shifts`) runs on training batches
    only, seeded per (seed, step, rank), so it keeps the stream deterministic.
    """

    def build(seed: int) -> nn.Module:
        """The network with weights drawn from a generator seeded by ``seed``."""
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            return network()

    def batches(
        rank: int, world_size: int, batch_size: int, seed: int, start_step: int = 0,
    ) -> Iterator[Batch]:
        """This rank's shard of every global batch (see ``shard_batches``)."""
        x_train, y_train, _, _ = load_split()
        return shard_batches(view(x_train), y_train, rank, world_size, batch_size, seed,
                             start_step, augment)

    def evaluate(model: nn.Module) -> dict[str, float]:
        """Accuracy and loss on the 449 held-out digits."""
        _, _, x_test, y_test = load_split()
        return classification_metrics(model, view(x_test), y_test)

    return ModelSpec(
        name=name, build=build, batches=batches, loss=nn.functional.cross_entropy,
        evaluate=evaluate, primary_metric="test_accuracy", higher_is_better=True,
        default_batch_size=default_batch_size, default_lr=default_lr,
        description=description, extra=dict(extra or {}),
    )
