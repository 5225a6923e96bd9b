"""PacTrain under Hugging Face ``transformers.Trainer``: a callback that attaches itself.

Why a callback with the trainer in hand: ``Trainer`` wraps the model in DDP and prepares
the optimizer inside ``train()``, after the user last sees them, and its callbacks receive
the unwrapped model only. ``on_train_begin`` is the first moment both the DDP wrapper
(``trainer.model_wrapped``) and the optimizer exist and no gradient does, which is where
``pactrain.attach`` must run. So the recipe is::

    trainer = Trainer(model=model, args=TrainingArguments(..., ddp_backend="gloo"), ...)
    pactrain.integrations.hf_trainer.attach_to_trainer(trainer, sparsity=0.8)
    trainer.train()                       # torchrun --nproc_per_node N script.py

The schedule's length is the trainer's ``max_steps``. At every checkpoint the callback
writes each rank's PacTrain state (masks, schedule position, residuals) next to the
trainer's files (``checkpoint-N/pactrain.rank{r}.pt``), and ``train(resume_from_checkpoint=
...)`` finds it there again (a resumed run whose file is missing fails, naming it, rather
than restarting the masks from scratch). Example: ``pactrain/examples/hf_trainer.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from transformers import TrainerCallback

from pactrain.attached import AttachError, PacTrain, attach

STATE_FILE = "pactrain.rank{rank}.pt"


class PacTrainCallback(TrainerCallback):
    """Attaches PacTrain when training begins and checkpoints its state with the trainer's.

    Args:
        trainer: the ``transformers.Trainer`` (its DDP wrapper is read at train begin).
        **attach_kwargs: passed to :func:`pactrain.attach` (``sparsity``, ``method``,
            ``prune``, ...); ``total_steps`` is the trainer's ``max_steps``.
    """

    def __init__(self, trainer: Any, **attach_kwargs: Any) -> None:
        if "total_steps" in attach_kwargs:
            raise TypeError("total_steps comes from the trainer (max_steps); leave it out")
        self.trainer = trainer
        self.attach_kwargs = attach_kwargs
        self.handle: PacTrain | None = None

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        ddp = self.trainer.model_wrapped
        if not isinstance(ddp, DistributedDataParallel):
            raise AttachError(
                f"the Trainer did not wrap the model in DistributedDataParallel (it holds a "
                f"{type(ddp).__name__}); PacTrain needs data parallelism: launch with "
                "torchrun --nproc_per_node N (and ddp_backend='gloo' on CPUs)")
        saved = None
        if state.global_step > 0:  # resumed: the masks must continue, not restart
            path = Path(args.output_dir) / f"checkpoint-{state.global_step}" / \
                STATE_FILE.format(rank=dist.get_rank())
            if not path.is_file():
                raise AttachError(f"resuming at step {state.global_step} but {path} is "
                                  "missing; PacTrain's masks cannot continue without it")
            saved = torch.load(path, map_location="cpu", weights_only=False)
        self.handle = attach(ddp, kwargs["optimizer"], total_steps=state.max_steps,
                             state=saved, **self.attach_kwargs)

    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.handle is None:
            return
        folder = Path(args.output_dir) / f"checkpoint-{state.global_step}"
        folder.mkdir(parents=True, exist_ok=True)
        torch.save(self.handle.state_dict(), folder / STATE_FILE.format(rank=dist.get_rank()))


def attach_to_trainer(trainer: Any, **attach_kwargs: Any) -> PacTrainCallback:
    """Add a :class:`PacTrainCallback` to ``trainer`` and return it (its ``handle`` is the
    :class:`pactrain.PacTrain` once ``train()`` has begun)."""
    callback = PacTrainCallback(trainer, **attach_kwargs)
    trainer.add_callback(callback)
    return callback
