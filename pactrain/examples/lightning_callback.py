"""PacTrain under PyTorch Lightning: one callback on a DDP trainer (2 CPU processes).

Run it (Lightning starts the second process itself):

    python pactrain/examples/lightning_callback.py

The LightningModule is ordinary; ``PacTrainCallback`` prunes its conv/linear weights to
``--sparsity`` during training and sends only the kept gradient entries. Every rank prints
one JSON line at the end (held-out accuracy, density, payload per step).
"""

from __future__ import annotations

import argparse
import json

import lightning.pytorch as pl
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from pactrain.data.digits import load_split
from pactrain.integrations.lightning import PacTrainCallback


class DigitsClassifier(pl.LightningModule):
    """A small MLP on the 8x8 digits; nothing PacTrain-specific."""

    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(64, 256), nn.ReLU(),
                                 nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], _: int) -> torch.Tensor:
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.05, momentum=0.9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--sparsity", type=float, default=0.8)
    parser.add_argument("--method", default="pactrain",
                        help="pactrain (adaptive tiers) or a fixed tier, e.g. pactrain-fp16")
    parser.add_argument("--devices", type=int, default=2)
    args = parser.parse_args()

    pl.seed_everything(0, verbose=False)
    x, y, x_test, y_test = load_split()
    loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)
    model = DigitsClassifier()
    callback = PacTrainCallback(sparsity=args.sparsity, method=args.method)
    trainer = pl.Trainer(accelerator="cpu", devices=args.devices, strategy="ddp",
                         max_steps=args.steps, callbacks=[callback], logger=False,
                         enable_checkpointing=False, enable_progress_bar=False,
                         enable_model_summary=False)
    trainer.fit(model, loader)
    model.eval()
    with torch.no_grad():
        accuracy = (model.net(x_test).argmax(1) == y_test).float().mean().item()
    summary = callback.pactrain.summary()
    zero = sum(int((m.weight == 0).sum()) for m in model.net if isinstance(m, nn.Linear))
    # one line per rank, in rank order (concurrent prints would interleave)
    for turn in range(trainer.world_size):
        if turn == trainer.global_rank:
            print(json.dumps({"rank": trainer.global_rank, "world_size": trainer.world_size,
                              "steps": summary["step"], "test_accuracy": accuracy,
                              "density": summary["density"], "zero_weights": zero,
                              "payload_bytes_per_step": summary["payload_bytes_per_step"],
                              "weights_sum": float(sum(p.detach().double().sum()
                                                       for p in model.parameters()))}), flush=True)
        trainer.strategy.barrier()


if __name__ == "__main__":
    main()
