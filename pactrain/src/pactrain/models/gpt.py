"""GPT-Tiny: a small decoder-only byte-level language model (Radford et al. 2018, shrunk).

Why byte-level: no tokenizer to download or train; the vocabulary is the 256 byte values,
and perplexity is per byte. Width 128, 4 blocks, 4 heads, context 64: about 0.85 M
parameters, most of them in linear layers, like its large relatives.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import torch
from torch import nn

from pactrain.data.text_corpus import validation_windows, window_batches
from pactrain.models import Batch, ModelSpec, register_model
from pactrain.models.vit import EncoderBlock


class GPTTiny(nn.Module):
    """Causal transformer LM; ``forward`` maps (batch, seq) byte ids to next-byte logits."""

    def __init__(
        self, vocab: int = 256, context: int = 64, dim: int = 128, depth: int = 4, heads: int = 4
    ) -> None:
        super().__init__()
        self.context = context
        self.embed = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.randn(1, context, dim) * 0.02)
        self.blocks = nn.ModuleList(EncoderBlock(dim, heads) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        seq = ids.shape[1]
        if seq > self.context:
            raise ValueError(f"sequence of {seq} exceeds the context of {self.context}")
        mask = torch.triu(torch.full((seq, seq), float("-inf"), device=ids.device), 1)
        x = self.embed(ids) + self.pos[:, :seq]
        for block in self.blocks:
            x = block(x, mask)
        return self.head(self.norm(x))


CONTEXT = 64


def build(seed: int) -> nn.Module:
    """GPT-Tiny with weights drawn from a generator seeded by ``seed``."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return GPTTiny(context=CONTEXT)


def batches(
    rank: int, world_size: int, batch_size: int, seed: int, start_step: int = 0
) -> Iterator[Batch]:
    """Random training windows of the bundled corpus (see pactrain.data.text_corpus)."""
    return window_batches(rank, world_size, batch_size, seed, start_step, CONTEXT)


def loss(outputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Next-byte cross-entropy, averaged over every position."""
    return nn.functional.cross_entropy(outputs.reshape(-1, outputs.shape[-1]), targets.reshape(-1))


@torch.no_grad()
def evaluate(model: nn.Module) -> dict[str, float]:
    """Loss and perplexity per byte on the held-out tail of the corpus."""
    device = next(model.parameters()).device  # the corpus lives on the CPU
    inputs, targets = (t.to(device) for t in validation_windows(CONTEXT))
    model.eval()
    test_loss = float(loss(model(inputs), targets))
    return {"test_loss": test_loss, "perplexity": math.exp(test_loss)}


SPEC = register_model(ModelSpec(
    name="gpt-tiny", build=build, batches=batches, loss=loss, evaluate=evaluate,
    primary_metric="perplexity", higher_is_better=False, default_batch_size=8,
    default_lr=0.05,
    description="byte-level decoder-only LM (0.87 M parameters) on scikit-learn's dataset cards",
    extra={"parameters": 867_328},
))
