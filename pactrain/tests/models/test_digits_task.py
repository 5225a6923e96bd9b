"""The shared digits task: real sklearn images at 32x32, one exact per-rank stream, and a
short real training of resnet18 that learns them."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from torch.nn import functional

from pactrain.data.digits import (
    RGB32_MEAN,
    RGB32_STD,
    SPLIT_SEED,
    load_split,
    random_shifts,
    shard_batches,
    to_rgb32,
)
from pactrain.models import get_model
from pactrain.train.config import RunConfig
from pactrain.train.launch import run_training

DIGIT_MODELS = ["digits-cnn", "resnet18", "vit-tiny"]


def test_the_32px_view_is_the_interpolated_sklearn_image() -> None:
    from sklearn.datasets import load_digits

    raw = load_digits().images
    first_test = int(np.random.RandomState(SPLIT_SEED).permutation(len(raw))[0])
    grey = torch.as_tensor(raw[first_test], dtype=torch.float32)[None, None] / 16.0
    expected = (functional.interpolate(grey, size=(32, 32), mode="bilinear")
                - RGB32_MEAN) / RGB32_STD
    _, _, x_test, _ = load_split()
    image = to_rgb32(x_test[:1])
    assert image.shape == (1, 3, 32, 32)
    for channel in range(3):
        assert torch.allclose(image[0, channel], expected[0, 0])


def test_the_32px_training_images_are_normalised() -> None:
    x_train, _, _, _ = load_split()
    images = to_rgb32(x_train)
    assert float(images.mean()) == pytest.approx(0.0, abs=1e-3)
    assert float(images.std()) == pytest.approx(1.0, abs=1e-3)
    with pytest.raises(ValueError, match="grey images"):
        to_rgb32(images)


def test_shards_are_disjoint_per_step_and_cover_the_epoch() -> None:
    ids = torch.arange(100, dtype=torch.float32).view(100, 1, 1, 1)
    labels = torch.arange(100)
    streams = [shard_batches(ids, labels, rank, 4, 5, seed=2) for rank in range(4)]
    epoch = [[next(s)[1] for s in streams] for _ in range(5)]  # 100 // 20 steps per epoch
    for step in epoch:
        seen = torch.cat(step)
        assert len(set(seen.tolist())) == 20  # the ranks' shards of one step are disjoint
    assert sorted(torch.cat([b for step in epoch for b in step]).tolist()) == list(range(100))
    with pytest.raises(ValueError, match="lower --batch-size or --workers"):
        next(shard_batches(ids, labels, 0, 4, 30, seed=0))


@pytest.mark.parametrize("name", DIGIT_MODELS)
def test_stream_is_a_pure_function_of_seed_step_and_rank(name: str) -> None:
    spec = get_model(name)
    full = list(itertools.islice(spec.batches(0, 2, 8, 3), 180))  # crosses epoch ends
    resumed = list(itertools.islice(spec.batches(0, 2, 8, 3, start_step=170), 10))
    assert all(torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
               for a, b in zip(full[170:], resumed, strict=True))
    other_rank = next(spec.batches(1, 2, 8, 3))
    assert not torch.equal(full[0][0], other_rank[0])


def test_resnet18_and_vit_see_3x32x32_digits_with_digit_labels() -> None:
    for name in ("resnet18", "vit-tiny"):
        images, labels = next(get_model(name).batches(0, 4, 16, seed=0))
        assert images.shape == (16, 3, 32, 32) and images.dtype == torch.float32
        assert int(labels.min()) >= 0 and int(labels.max()) <= 9


def test_shifts_move_the_digit_by_at_most_max_shift_and_are_seeded() -> None:
    image = torch.zeros(6, 1, 32, 32)
    image[:, :, 16, 16] = 1.0
    shift = random_shifts(2)
    a = shift(image, torch.Generator().manual_seed(5))
    b = shift(image, torch.Generator().manual_seed(5))
    assert torch.equal(a, b)
    for moved in a:
        (y, x), = torch.nonzero(moved[0]).tolist()
        assert abs(y - 16) <= 2 and abs(x - 16) <= 2
    assert float(a.sum()) == 6.0  # nothing lost: the digit stays inside the frame
    assert torch.equal(random_shifts(0)(image, torch.Generator()), image)


def test_evaluate_scores_the_449_held_out_images_and_keeps_the_mode() -> None:
    spec = get_model("resnet18")
    model = spec.build(0)
    model.train()
    metrics = spec.evaluate(model)
    assert model.training
    assert 0.0 <= metrics["test_accuracy"] <= 1.0 and metrics["test_loss"] > 0


@pytest.mark.slow
def test_resnet18_learns_the_real_digits_in_a_short_distributed_run() -> None:
    config = RunConfig(model="resnet18", method="dense", workers=2, steps=40, sparsity=0.0,
                       seed=0, warmup_steps=2, probe_link=False)
    result = run_training(config, progress=False, timeout_s=300)
    assert result["final_test_accuracy"] >= 0.5, result  # chance is 0.1
