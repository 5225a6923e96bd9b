"""PyTorch Lightning: :class:`PacTrainCallback` attaches PacTrain to the DDP strategy's model.

Why a callback and not ``DDPStrategy(ddp_comm_hook=...)``: a comm hook alone compresses
but does not prune, and PacTrain's compaction only pays on pruned weights whose masks are
identical on every rank. The callback attaches at ``on_train_start`` (the strategy has
wrapped the module in DDP and built the optimizer; no backward has run), so the pruning
schedule, the mask checks and the hook come from one :func:`pactrain.attach` call.

Example::

    trainer = lightning.Trainer(accelerator="cpu", devices=2, strategy="ddp",
                                max_steps=300,
                                callbacks=[PacTrainCallback(sparsity=0.8)])

Lightning saves the callback's state in its checkpoints and restores it on
``trainer.fit(..., ckpt_path=...)``; a checkpoint written under another sparsity, method
or world size is refused with the difference named.
"""

from __future__ import annotations

from typing import Any

try:
    import lightning.pytorch as pl
except ImportError as err:  # pragma: no cover - depends on the environment
    raise ImportError("pactrain.integrations.lightning needs PyTorch Lightning: "
                      "pip install 'pactrain[lightning]'") from err
from torch.nn.parallel import DistributedDataParallel

from pactrain.attached import AttachError, PacTrain, attach


class PacTrainCallback(pl.Callback):
    """Prune while training and send compacted gradients under Lightning's DDP.

    Args:
        sparsity: final sparsity of the trainable conv/linear weights.
        total_steps: the schedule's length (``None``: ``trainer.estimated_stepping_batches``).
        **attach_kwargs: the rest of :func:`pactrain.attach` (``method``, ``prune_start``,
            ``prune_end``, ``options``, ...).
    """

    def __init__(self, sparsity: float = 0.8, total_steps: int | None = None,
                 **attach_kwargs: Any) -> None:
        self.sparsity = sparsity
        self.total_steps = total_steps
        self.attach_kwargs = attach_kwargs
        self.pactrain: PacTrain | None = None
        self._pending: dict[str, Any] | None = None

    def on_train_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        model = trainer.strategy.model
        if not isinstance(model, DistributedDataParallel):
            raise AttachError(
                f"PacTrainCallback needs a DDP strategy (strategy='ddp'), the trainer runs "
                f"{type(trainer.strategy).__name__} with a {type(model).__name__}")
        if len(trainer.optimizers) != 1:
            raise AttachError(f"PacTrainCallback supports one optimizer, the module "
                              f"configures {len(trainer.optimizers)}")
        steps = self.total_steps or int(trainer.estimated_stepping_batches)
        # a resumed fit restored the optimizer already: attach continues the saved state
        self.pactrain = attach(model, trainer.optimizers[0], sparsity=self.sparsity,
                               total_steps=steps, state=self._pending, **self.attach_kwargs)
        self._pending = None

    def state_dict(self) -> dict[str, Any]:
        return self.pactrain.state_dict() if self.pactrain is not None else {}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        # Lightning restores callbacks before on_train_start: keep it until attached
        if state_dict:
            self._pending = state_dict
