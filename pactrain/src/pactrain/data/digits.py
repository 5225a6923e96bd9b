"""scikit-learn's bundled handwritten digits: the fixed split, the 32x32 view and the stream.

Why these images: they ship inside scikit-learn (a dependency), so every model that reports
accuracy does so on real data with nothing downloaded. All digit models (``digits-cnn`` at
the native 8x8, ``resnet18`` and ``vit-tiny`` at 32x32) share this one split and this one
batch stream, so their accuracies are measured on the same 449 held-out images and a
resumed run sees exactly the batches the uninterrupted run would have seen.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import torch
from torch.nn import functional

#: Seed of the fixed train/test split (not the run's seed: every run sees the same split).
SPLIT_SEED = 20250524
TEST_FRACTION = 0.25

#: Mean and standard deviation of the training images after bilinear upsampling to 32x32
#: (pixel values in [0, 1]); fixed numbers, so normalising never depends on a data pass.
RGB32_MEAN = 0.3058
RGB32_STD = 0.3244

Augment = Callable[[torch.Tensor, torch.Generator], torch.Tensor]


def load_split() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Return ``(x_train, y_train, x_test, y_test)``; images scaled to [0, 1], shape (n,1,8,8).

    1348 training and 449 test images; the split depends only on :data:`SPLIT_SEED`.
    """
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = torch.as_tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
    labels = torch.as_tensor(digits.target, dtype=torch.int64)
    order = torch.as_tensor(np.random.RandomState(SPLIT_SEED).permutation(len(labels)))
    n_test = round(TEST_FRACTION * len(labels))
    test, train = order[:n_test], order[n_test:]
    return images[train], labels[train], images[test], labels[test]


def to_rgb32(images: torch.Tensor, size: int = 32) -> torch.Tensor:
    """8x8 grey digits (n,1,8,8) in [0, 1] as normalised (n,3,size,size) colour images.

    Why: resnet18 and vit-tiny are built for 32x32 RGB input; bilinear upsampling keeps the
    strokes smooth, the grey channel is replicated to three, and the fixed mean and
    standard deviation centre the pixels for the first convolution or patch embedding.
    """
    if images.dim() != 4 or images.shape[1] != 1:
        raise ValueError(f"expected grey images of shape (n, 1, h, w), got {tuple(images.shape)}")
    up = functional.interpolate(images, size=(size, size), mode="bilinear",
                                align_corners=False)
    return ((up - RGB32_MEAN) / RGB32_STD).expand(-1, 3, -1, -1).contiguous()


def random_shifts(max_shift: int) -> Augment:
    """An augmentation moving each image by up to ``max_shift`` pixels in x and y.

    Why: the digits are centred, so small translations are label-preserving and stop the
    large networks from memorising 1348 images. Vacated pixels take the image's corner
    value (the background); the offsets come from the generator the stream passes in.
    """
    if max_shift < 0:
        raise ValueError(f"max_shift must be >= 0, got {max_shift}")

    def shift(images: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        if max_shift == 0:
            return images
        n, _, h, w = images.shape
        background = images[:, :, :1, :1]
        padded = background.expand(-1, -1, h + 2 * max_shift, w + 2 * max_shift).clone()
        padded[:, :, max_shift:max_shift + h, max_shift:max_shift + w] = images
        offsets = torch.randint(0, 2 * max_shift + 1, (n, 2), generator=generator).tolist()
        return torch.stack([padded[i, :, dy:dy + h, dx:dx + w]
                            for i, (dy, dx) in enumerate(offsets)])

    return shift


def shard_batches(
    images: torch.Tensor, labels: torch.Tensor, rank: int, world_size: int, batch_size: int,
    seed: int, start_step: int = 0, augment: Augment | None = None,
) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """Endless per-rank batches of ``(images, labels)``, a pure function of the arguments.

    1. Each epoch is a permutation of the training set seeded by (seed, epoch), cut into
       global batches of ``batch_size * world_size``; rank ``r`` takes the ``r``-th slice,
       so the ranks' shards of one step are disjoint.
    2. ``augment``, if given, runs on the slice with a generator seeded by (seed, step, rank).

    Step ``k`` therefore depends only on (seed, k, rank): starting at ``start_step`` gives
    exactly the tail of the stream started at 0, which makes resume exact.
    """
    global_batch = batch_size * world_size
    per_epoch = len(labels) // global_batch
    if per_epoch == 0:
        raise ValueError(
            f"global batch {global_batch} exceeds the {len(labels)} training images; "
            "lower --batch-size or --workers"
        )
    step = start_step
    while True:
        epoch, index = divmod(step, per_epoch)
        generator = torch.Generator().manual_seed(seed * 1_000_003 + epoch)
        order = torch.randperm(len(labels), generator=generator)
        start = index * global_batch + rank * batch_size
        take = order[start:start + batch_size]
        batch = images[take]
        if augment is not None:
            step_generator = torch.Generator().manual_seed(
                (seed * 1_000_003 + step) * 1031 + rank)
            batch = augment(batch, step_generator)
        yield batch, labels[take]
        step += 1
