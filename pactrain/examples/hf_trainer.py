"""PacTrain under Hugging Face ``transformers.Trainer``: GPT-2 from a config, real text.

Run it with 2 CPU processes:

    torchrun --standalone --nproc_per_node 2 pactrain/examples/hf_trainer.py

A byte-level ``GPT2LMHeadModel`` (built from a config: nothing downloaded) learns CPython's
standard-library sources with the stock ``Trainer``; one call,
``attach_to_trainer(trainer, sparsity=0.8)``, prunes its ``Conv1D`` projections while it
trains and compacts their gradients. Every rank prints one JSON line at the end.
"""

from __future__ import annotations

import argparse
import json

import torch
import torch.distributed as dist
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

from pactrain.data.source_corpus import split_sources
from pactrain.integrations.hf_trainer import attach_to_trainer

CONTEXT = 64


class Windows(torch.utils.data.Dataset):
    """Fixed 64-byte windows of the corpus as ``{"input_ids", "labels"}`` (GPT-2 shifts)."""

    def __init__(self, ids: torch.Tensor) -> None:
        self.ids = ids[: len(ids) // CONTEXT * CONTEXT].view(-1, CONTEXT)

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
        return {"input_ids": self.ids[index], "labels": self.ids[index]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--sparsity", type=float, default=0.8)
    parser.add_argument("--method", default="pactrain",
                        help="pactrain (adaptive tiers) or a fixed tier, e.g. pactrain-fp16")
    parser.add_argument("--out", default="hf-trainer-out")
    args = parser.parse_args()

    train_ids, val_ids = split_sources()
    config = GPT2Config(vocab_size=256, n_positions=CONTEXT, n_embd=128, n_layer=3, n_head=4,
                        bos_token_id=0, eos_token_id=0)
    torch.manual_seed(0)
    model = GPT2LMHeadModel(config)
    training = TrainingArguments(
        output_dir=args.out, max_steps=args.steps, per_device_train_batch_size=8,
        learning_rate=2e-3, use_cpu=True, ddp_backend="gloo", report_to=[],
        save_strategy="no", logging_steps=10, disable_tqdm=True, seed=0)
    trainer = Trainer(model=model, args=training, train_dataset=Windows(train_ids))
    callback = attach_to_trainer(trainer, sparsity=args.sparsity, prune_start=0.0,
                                 prune_end=0.25, method=args.method)
    trainer.train()

    held_out = Windows(val_ids).ids[:64]
    model.eval()
    with torch.no_grad():
        loss = float(model(input_ids=held_out, labels=held_out).loss)
    summary = callback.handle.summary()
    blocks = [p for n, p in model.named_parameters() if ".h." in n and p.dim() == 2]
    rank, world = dist.get_rank(), dist.get_world_size()
    for turn in range(world):  # one line per rank, in rank order
        if turn == rank:
            print(json.dumps({
                "rank": rank, "world_size": world, "steps": summary["step"],
                "density": summary["density"],
                "compacted_fraction": summary["compacted_fraction"],
                "block_zero_share": sum(int((p == 0).sum()) for p in blocks)
                / sum(p.numel() for p in blocks),
                "payload_bytes_per_step": summary["payload_bytes_per_step"],
                "dense_bytes": sum(p.numel() * 4 for p in model.parameters()),
                "held_out_loss": loss,
                "weights_sum": float(sum(p.detach().double().sum()
                                         for p in model.parameters()))}), flush=True)
        dist.barrier()


if __name__ == "__main__":
    main()
