"""resnet18, vit-tiny and gpt-tiny: registered, the documented size, deterministic, learnable.

The digits stream and evaluation the image models share are tested in
tests/models/test_digits_task.py.
"""

from __future__ import annotations

import torch

from pactrain.data.text_corpus import corpus_bytes, split_corpus
from pactrain.models import get_model


def _count(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def test_resnet18_has_the_textbook_parameter_count_and_32px_input() -> None:
    spec = get_model("resnet18")
    model = spec.build(0)
    assert _count(model) == 11_689_512
    x, _ = next(spec.batches(0, 2, 2, seed=0))
    assert x.shape == (2, 3, 32, 32) and model(x).shape == (2, 1000)


def test_vit_tiny_and_gpt_tiny_shapes() -> None:
    vit = get_model("vit-tiny")
    x, _ = next(vit.batches(0, 2, 2, seed=0))
    assert vit.build(0)(x).shape == (2, 10) and _count(vit.build(0)) == 5_381_194
    gpt = get_model("gpt-tiny")
    ids, targets = next(gpt.batches(1, 2, 3, seed=0))
    assert ids.shape == targets.shape == (3, 64)
    assert torch.equal(ids[:, 1:], targets[:, :-1])  # targets are the next bytes
    assert gpt.build(0)(ids).shape == (3, 64, 256)


def test_streams_are_pure_functions_of_their_arguments_and_disjoint_per_rank() -> None:
    spec = get_model("resnet18")
    a = next(spec.batches(0, 2, 4, seed=3, start_step=5))[0]
    b = next(spec.batches(0, 2, 4, seed=3, start_step=5))[0]
    c = next(spec.batches(1, 2, 4, seed=3, start_step=5))[0]
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert torch.equal(_first_param(spec.build(7)), _first_param(spec.build(7)))


def _first_param(model: torch.nn.Module) -> torch.Tensor:
    return next(model.parameters()).detach()


def test_gpt_is_causal() -> None:
    model = get_model("gpt-tiny").build(0).eval()
    ids = torch.randint(0, 256, (1, 16))
    changed = ids.clone()
    changed[0, 10] = (ids[0, 10] + 1) % 256
    with torch.no_grad():
        a, b = model(ids), model(changed)
    assert torch.allclose(a[0, :10], b[0, :10], atol=1e-5)
    assert not torch.allclose(a[0, 10:], b[0, 10:])


def test_corpus_ships_with_scikit_learn_and_the_lm_learns_it() -> None:
    text = corpus_bytes()
    assert len(text) > 30_000 and b"digits" in text.lower()
    train, val = split_corpus()
    assert len(train) > 8 * len(val)
    spec = get_model("gpt-tiny")
    torch.manual_seed(0)
    model = spec.build(0)
    before = spec.evaluate(model)["perplexity"]
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    stream = spec.batches(0, 1, 16, seed=0)
    model.train()
    for _ in range(30):
        x, y = next(stream)
        opt.zero_grad()
        spec.loss(model(x), y).backward()
        opt.step()
    after = spec.evaluate(model)["perplexity"]
    assert after < 0.5 * before, (before, after)
