"""digits-cnn: fixed split, disjoint per-rank shards, resumable batch stream."""

import itertools

import torch

from pactrain.data.digits import load_split
from pactrain.models import get_model


def test_split_is_fixed_and_disjoint() -> None:
    x_train, y_train, _x_test, y_test = load_split()
    assert x_train.shape[1:] == (1, 8, 8) and len(y_train) + len(y_test) == 1797
    assert len(y_test) == 449
    assert float(x_train.max()) <= 1.0 and float(x_train.min()) >= 0.0
    again = load_split()
    assert torch.equal(again[1], y_train) and torch.equal(again[3], y_test)


def test_ranks_get_disjoint_shards_and_resume_continues_the_stream() -> None:
    spec = get_model("digits-cnn")
    streams = [spec.batches(rank, 2, 16, 3) for rank in range(2)]
    first = [next(s) for s in streams]
    assert not any(torch.equal(first[0][0][i], first[1][0][j])
                   for i in range(16) for j in range(16)
                   if first[0][0][i].abs().sum() > 0)
    full = list(itertools.islice(spec.batches(0, 2, 16, 3), 50))
    resumed = list(itertools.islice(spec.batches(0, 2, 16, 3, start_step=45), 5))
    assert all(torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
               for a, b in zip(full[45:], resumed, strict=True))


def test_build_is_seeded_and_evaluate_reports_accuracy() -> None:
    spec = get_model("digits-cnn")
    a, b, c = spec.build(0), spec.build(0), spec.build(1)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))
    assert not torch.equal(next(a.parameters()), next(c.parameters()))
    metrics = spec.evaluate(a)
    assert set(metrics) >= {"test_accuracy", "test_loss"} and 0.0 <= metrics["test_accuracy"] <= 1
