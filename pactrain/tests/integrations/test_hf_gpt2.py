"""Hugging Face GPT-2 (``Conv1D`` projections, LM head tied to the embedding) under
``pactrain.attach`` on 2 real gloo ranks: its block weights are pruned and compacted."""

import pytest
import torch
from torch.nn.parallel import DistributedDataParallel

import pactrain
from pactrain.train.local_group import run_on_local_group

transformers = pytest.importorskip(
    "transformers", reason="Hugging Face transformers is an extra: pip install 'pactrain[hf]'")

SPARSITY = 0.8


def byte_level_gpt2() -> torch.nn.Module:
    """A byte-level GPT-2 built from a config (no download): vocab 256, width 128, 3 blocks."""
    config = transformers.GPT2Config(vocab_size=256, n_positions=64, n_embd=128, n_layer=3,
                                     n_head=4, bos_token_id=0, eos_token_id=0)
    torch.manual_seed(0)
    return transformers.GPT2LMHeadModel(config)


def _train_gpt2(rank: int, world_size: int, method: str) -> dict:
    model = byte_level_gpt2()
    ddp = DistributedDataParallel(model)
    optimizer = torch.optim.AdamW(ddp.parameters(), lr=1e-3)
    pt = pactrain.attach(ddp, optimizer, sparsity=SPARSITY, total_steps=6, method=method,
                         prune_start=0.0, prune_end=0.0)
    for step in range(6):
        generator = torch.Generator().manual_seed(100 * step + rank)
        ids = torch.randint(0, 256, (4, 32), generator=generator)
        optimizer.zero_grad()
        ddp(input_ids=ids, labels=ids).loss.backward()
        optimizer.step()
    blocks = {name: p for name, p in model.named_parameters()
              if name.startswith("transformer.h.") and p.dim() == 2}
    block_entries = sum(p.numel() for p in blocks.values())
    zero = sum(int((p == 0).sum()) for p in blocks.values())
    pruned = pt.tracker.pruner.selection
    dense_bytes = sum(p.numel() * 4 for p in model.parameters())  # the tied head once
    ideal = (1 - SPARSITY) * pruned.pruned_bytes() + (dense_bytes - pruned.pruned_bytes())
    return {"zero_share": zero / block_entries, "pruned_names": sorted(pruned.params),
            "summary": pt.summary(), "ideal": ideal, "dense": dense_bytes,
            "payload": pt.method.payload.bytes_per_step(),
            "embedding_zeros": int((model.transformer.wte.weight == 0).sum())}


@pytest.mark.slow
def test_hf_gpt2_blocks_are_pruned_and_compacted_on_two_ranks() -> None:
    results = run_on_local_group(_train_gpt2, 2, "pactrain-fp32")
    for result in results:
        # every Conv1D of the 3 blocks (c_attn, attn c_proj, c_fc, mlp c_proj): 12 matrices
        assert len(result["pruned_names"]) == 12
        assert all(".h." in name for name in result["pruned_names"])
        assert result["zero_share"] >= 0.95 * SPARSITY  # block matrices pruned
        assert result["embedding_zeros"] == 0  # the tied embedding/LM head stays dense
        summary = result["summary"]
        assert summary["compacted_fraction"] > 0.9
        assert summary["density"] == pytest.approx(1 - SPARSITY, abs=1e-3)
        assert set(summary["tier_counts"]) == {"fp32"}  # every bucket compacted
        assert result["payload"] <= 1.1 * result["ideal"]
        assert result["payload"] <= 0.3 * result["dense"]


def _warns_when_mostly_dense(rank: int, world_size: int) -> list[str]:
    import warnings

    model = byte_level_gpt2()
    ddp = DistributedDataParallel(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pactrain.attach(ddp, optimizer, sparsity=0.8, total_steps=4,
                        method="pactrain-fp32", prune=["transformer.h.0.attn.c_proj.weight"])
    return [str(w.message) for w in caught if issubclass(w.category, UserWarning)
            and "pactrain prunes only" in str(w.message)]


def test_attach_warns_naming_the_largest_dense_parameters() -> None:
    messages = run_on_local_group(_warns_when_mostly_dense, 2)[0]
    assert len(messages) == 1
    # the explicit selection left the other blocks' 128x512 MLP matrices dense: named first
    assert "prunes only 2.6% of the gradient bytes" in messages[0]
    assert "mlp.c_fc.weight (65,536)" in messages[0]
