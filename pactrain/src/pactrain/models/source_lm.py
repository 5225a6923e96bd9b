"""Byte-level language models on the standard library's sources: ours and Hugging Face's.

- ``lm-gpt``: our decoder (:class:`pactrain.models.gpt.GPTTiny`: width 128, 4 blocks,
  ``nn.MultiheadAttention``, context 64; 0.87 M parameters, 3.47 MB of fp32 gradient).
- ``hf-gpt2``: Hugging Face's ``GPT2LMHeadModel`` built from a byte-level
  ``GPT2Config`` (vocab 256, 64 positions, width 128, 4 blocks, 4 heads; 0.83 M
  parameters, its projections ``transformers`` ``Conv1D``, its LM head tied to the token
  embedding), nothing downloaded; needs the ``pactrain[hf]`` extra, and says so before
  any worker starts when it is missing.

Both train on random 64-byte windows of :mod:`pactrain.data.source_corpus` and report the
held-out loss per byte (and perplexity) on the same 256 windows, so their curves compare.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

import torch
from torch import nn

from pactrain.data.source_corpus import split_sources
from pactrain.data.text_corpus import validation_windows, window_batches
from pactrain.models import Batch, ModelSpec, register_model
from pactrain.models.gpt import GPTTiny
from pactrain.models.gpt import loss as next_byte_loss

CONTEXT = 64
EVAL_CHUNK = 256


class HFCausalLM(nn.Module):
    """A Hugging Face causal LM seen as ``ids -> logits`` (what the training loop calls)."""

    def __init__(self, inner: nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.inner(input_ids=ids).logits


def check_transformers() -> None:
    """Raise a one-line install hint when ``transformers`` is missing."""
    try:
        import transformers  # noqa: F401
    except ImportError:
        raise FileNotFoundError("hf-gpt2 needs Hugging Face transformers: "
                                "pip install 'pactrain[hf]'") from None


def byte_level_gpt2() -> nn.Module:
    """GPT-2 from a byte-level config (no download)."""
    check_transformers()
    import transformers

    config = transformers.GPT2Config(vocab_size=256, n_positions=CONTEXT, n_embd=128,
                                     n_layer=4, n_head=4, bos_token_id=0, eos_token_id=0)
    return HFCausalLM(transformers.GPT2LMHeadModel(config))


def lm_spec(name: str, network: Callable[[], nn.Module], *, description: str,
            check_data: Callable[[], None] | None = None,
            extra: dict | None = None) -> ModelSpec:
    """A :class:`ModelSpec` training ``network()`` on the standard library's sources."""

    def build(seed: int) -> nn.Module:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            return network()

    def batches(rank: int, world_size: int, batch_size: int, seed: int,
                start_step: int = 0) -> Iterator[Batch]:
        return window_batches(rank, world_size, batch_size, seed, start_step, CONTEXT,
                              split_sources)

    @torch.no_grad()
    def evaluate(model: nn.Module) -> dict[str, float]:
        """Mean loss per byte (and perplexity) over the 256 held-out windows."""
        device = next(model.parameters()).device
        inputs, targets = validation_windows(CONTEXT, split_sources)
        was_training = model.training
        model.eval()
        total = 0.0
        try:
            for start in range(0, len(inputs), EVAL_CHUNK):
                x = inputs[start:start + EVAL_CHUNK].to(device)
                y = targets[start:start + EVAL_CHUNK].to(device)
                total += float(next_byte_loss(model(x), y)) * len(x)
        finally:
            model.train(was_training)
        test_loss = total / len(inputs)
        return {"test_loss": test_loss, "perplexity": math.exp(test_loss)}

    return ModelSpec(
        name=name, build=build, batches=batches, loss=next_byte_loss, evaluate=evaluate,
        primary_metric="test_loss", higher_is_better=False, default_batch_size=16,
        default_lr=0.05, description=description, check_data=check_data,
        extra=dict(extra or {}),
    )


LM_GPT = register_model(lm_spec(
    "lm-gpt", lambda: GPTTiny(context=CONTEXT),
    description="byte-level GPT (0.87 M parameters, nn.MultiheadAttention) on CPython's "
                "standard-library sources",
    extra={"parameters": 867_328},
))

HF_GPT2 = register_model(lm_spec(
    "hf-gpt2", byte_level_gpt2, check_data=check_transformers,
    description="Hugging Face GPT2LMHeadModel from a byte-level config (Conv1D, tied head) "
                "on CPython's standard-library sources; needs pactrain[hf]",
))
