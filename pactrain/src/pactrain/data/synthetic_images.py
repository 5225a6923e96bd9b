"""Generated 32x32 colour images for throughput runs (nothing is downloaded).

Each class has a fixed random prototype image; a sample is its prototype plus Gaussian
noise. That keeps the task learnable (loss falls, so the optimizer and the gradient
statistics behave like training, not like noise) while costing nothing to store.
Prototypes depend only on ``data_seed``; a batch depends only on (seed, step, rank), so
every rank and every resumed run sees the same stream.
"""

from __future__ import annotations

from collections.abc import Iterator

import torch

DATA_SEED = 32_32


def prototypes(num_classes: int, size: int = 32, data_seed: int = DATA_SEED) -> torch.Tensor:
    """One (3, size, size) prototype per class."""
    gen = torch.Generator().manual_seed(data_seed)
    return torch.randn(num_classes, 3, size, size, generator=gen)


def make_images(
    n: int, num_classes: int = 10, size: int = 32, noise: float = 1.0, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` images of shape (3, size, size) and labels in ``[0, num_classes)``."""
    if n < 1 or num_classes < 1:
        raise ValueError(f"need n >= 1 and num_classes >= 1, got n={n}, classes={num_classes}")
    gen = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, num_classes, (n,), generator=gen)
    noise_t = noise * torch.randn(n, 3, size, size, generator=gen)
    return prototypes(num_classes, size)[labels] + noise_t, labels


def image_batches(
    rank: int, world_size: int, batch_size: int, seed: int, start_step: int = 0,
    num_classes: int = 10, size: int = 32,
) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """Endless per-rank batches; step ``k`` of rank ``r`` depends only on (seed, k, r)."""
    protos = prototypes(num_classes, size)
    step = start_step
    while True:
        gen = torch.Generator().manual_seed((seed * 1_000_003 + step) * 1031 + rank)
        labels = torch.randint(0, num_classes, (batch_size,), generator=gen)
        yield protos[labels] + torch.randn(batch_size, 3, size, size, generator=gen), labels
        step += 1
