"""An image-classification task as a :class:`ModelSpec`: one stream, loss and evaluation.

Why one place: the digits models and the Fashion-MNIST models differ only in their network,
in their data and in how they see an image; the training stream (disjoint per-rank shards,
a pure function of (seed, step, rank)), the loss and the held-out evaluation must be the
same for all of them, so their accuracies compare and a resumed run of any of them is
exact.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch import nn

from pactrain.data.digits import Augment, shard_batches
from pactrain.models import Batch, ModelSpec

View = Callable[[torch.Tensor], torch.Tensor]
Split = Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]]

#: Images per forward pass of the evaluation: the full 10,000-image Fashion-MNIST test set
#: through a CNN in one pass would hold about 1 GB of activations.
EVAL_CHUNK = 1000


def native(images: torch.Tensor) -> torch.Tensor:
    """The images as they are."""
    return images


@torch.no_grad()
def classification_metrics(
    model: nn.Module, images: torch.Tensor, labels: torch.Tensor, chunk: int = EVAL_CHUNK,
) -> dict[str, float]:
    """Accuracy and mean cross-entropy of ``model`` over all of ``images``, in eval mode
    (batch norm uses its running statistics), ``chunk`` images per forward pass; the
    model's previous mode is restored afterwards."""
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device  # the data lives on the CPU
    correct, loss_sum = 0, 0.0
    try:
        for start in range(0, len(labels), chunk):
            x = images[start:start + chunk].to(device)
            y = labels[start:start + chunk].to(device)
            logits = model(x)
            correct += int((logits.argmax(1) == y).sum())
            loss_sum += float(nn.functional.cross_entropy(logits, y, reduction="sum"))
    finally:
        model.train(was_training)
    return {"test_accuracy": correct / len(labels), "test_loss": loss_sum / len(labels)}


def image_spec(
    name: str, network: Callable[[], nn.Module], *, split: Split, view: View = native,
    augment: Augment | None = None, default_lr: float, default_batch_size: int,
    description: str, check_data: Callable[[], Any] | None = None,
    extra: dict[str, Any] | None = None,
) -> ModelSpec:
    """A :class:`ModelSpec` training ``network()`` on ``split()``'s images as ``view``
    shows them.

    ``augment`` (e.g. :func:`pactrain.data.digits.random_shifts`) runs on training batches
    only, seeded per (seed, step, rank), so it keeps the stream deterministic.
    ``check_data`` raises (cheaply, before any worker starts) when the data is missing.
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
        x_train, y_train, _, _ = split()
        return shard_batches(view(x_train), y_train, rank, world_size, batch_size, seed,
                             start_step, augment)

    def evaluate(model: nn.Module) -> dict[str, float]:
        """Accuracy and loss on the whole held-out split."""
        _, _, x_test, y_test = split()
        return classification_metrics(model, view(x_test), y_test)

    return ModelSpec(
        name=name, build=build, batches=batches, loss=nn.functional.cross_entropy,
        evaluate=evaluate, primary_metric="test_accuracy", higher_is_better=True,
        default_batch_size=default_batch_size, default_lr=default_lr,
        description=description, check_data=check_data, extra=dict(extra or {}),
    )
