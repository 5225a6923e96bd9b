"""A text corpus that ships with an installed dependency: scikit-learn's dataset cards.

Why this one: nothing may be downloaded at run time, and scikit-learn (a dependency of
this package) installs ``sklearn/datasets/descr/*.rst``, about 43 KB of English prose with
tables and references, in a stable place. The files are read in sorted order and
concatenated, so the corpus is the same on every rank. The language model is byte-level,
so the bytes are the tokens; the last ``val_fraction`` is held out for perplexity.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from importlib import resources

import torch


def corpus_bytes() -> bytes:
    """The concatenated dataset descriptions of ``sklearn.datasets.descr``."""
    root = resources.files("sklearn.datasets") / "descr"
    names = sorted(p.name for p in root.iterdir() if p.name.endswith(".rst"))
    if not names:
        raise FileNotFoundError(
            "no sklearn/datasets/descr/*.rst found; reinstall scikit-learn "
            "(pip install --force-reinstall scikit-learn)"
        )
    return b"\n".join((root / name).read_bytes() for name in names)


def split_corpus(val_fraction: float = 0.1) -> tuple[torch.Tensor, torch.Tensor]:
    """(train, validation) byte-id tensors; validation is the corpus's tail."""
    data = torch.frombuffer(bytearray(corpus_bytes()), dtype=torch.uint8).long()
    cut = int(len(data) * (1 - val_fraction))
    return data[:cut], data[cut:]


def sample_windows(
    data: torch.Tensor, batch: int, context: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """``batch`` random windows: inputs (batch, context) and next-byte targets."""
    starts = torch.randint(0, len(data) - context - 1, (batch,), generator=generator)
    idx = starts[:, None] + torch.arange(context + 1)
    windows = data[idx]
    return windows[:, :-1], windows[:, 1:]


Split = Callable[[], tuple[torch.Tensor, torch.Tensor]]


def window_batches(
    rank: int, world_size: int, batch_size: int, seed: int, start_step: int = 0,
    context: int = 64, split: Split = split_corpus,
) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """Endless per-rank training windows of ``split()``'s training part; step ``k`` of rank
    ``r`` depends on (seed, k, r)."""
    train, _ = split()
    step = start_step
    while True:
        gen = torch.Generator().manual_seed((seed * 1_000_003 + step) * 1031 + rank)
        yield sample_windows(train, batch_size, context, gen)
        step += 1


def validation_windows(context: int = 64, split: Split = split_corpus,
                       ) -> tuple[torch.Tensor, torch.Tensor]:
    """The held-out tail of ``split()`` cut into non-overlapping windows (inputs, targets)."""
    _, val = split()
    n = (len(val) - 1) // context
    inputs = val[: n * context].view(n, context)
    targets = val[1 : n * context + 1].view(n, context)
    return inputs, targets
