"""The classification task on generated 32x32 images that resnet18 and vit-tiny share.

Why one place: the throughput models differ only in their network; data, loss and the
held-out evaluation must be the same for every one of them so their rows compare.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import torch
from torch import nn

from pactrain.data.synthetic_images import image_batches, make_images
from pactrain.models import Batch, ModelSpec

EVAL_IMAGES = 256
EVAL_SEED = 987_654


def generated_image_spec(
    name: str, network: Callable[[int], nn.Module], num_classes: int, *, default_lr: float,
    description: str, parameters: int,
) -> ModelSpec:
    """A :class:`ModelSpec` training ``network(num_classes)`` on generated images."""

    def build(seed: int) -> nn.Module:
        """The network with weights drawn from a generator seeded by ``seed``."""
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            return network(num_classes)

    def batches(
        rank: int, world_size: int, batch_size: int, seed: int, start_step: int = 0
    ) -> Iterator[Batch]:
        """Generated 32x32 images (see pactrain.data.synthetic_images)."""
        return image_batches(rank, world_size, batch_size, seed, start_step, num_classes)

    @torch.no_grad()
    def evaluate(model: nn.Module) -> dict[str, float]:
        """Accuracy and loss on held-out generated images (a different seed)."""
        images, labels = make_images(EVAL_IMAGES, num_classes, seed=EVAL_SEED)
        model.eval()
        logits = model(images)
        return {
            "test_accuracy": float((logits.argmax(1) == labels).float().mean()),
            "test_loss": float(nn.functional.cross_entropy(logits, labels)),
        }

    return ModelSpec(
        name=name, build=build, batches=batches, loss=nn.functional.cross_entropy,
        evaluate=evaluate, primary_metric="test_accuracy", higher_is_better=True,
        default_batch_size=8, default_lr=default_lr, description=description,
        extra={"parameters": parameters},
    )
