"""``pactrain train --fsdp``: the registry's models sharded with FSDP2, as users shard them.

Why these rules: FSDP2's guidance (torch ``fully_shard`` docs) is to call ``fully_shard``
on each transformer block and then on the root, so that one block's parameters are
gathered at a time. The registry's models keep their blocks in a ``blocks`` list (GPT, ViT);
for the others (CNNs, ResNets) each top-level child that holds parameters is a unit (a
ResNet's stages). The root takes whatever is left (embeddings, heads, norms).

A checkpoint of a sharded run holds full tensors (``torch.distributed.checkpoint``'s
``get_state_dict`` with ``full_state_dict``), so it is the same file a DDP run writes and
loads on any world size's shards; PacTrain's own state stays per rank (its mask shards).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch
from torch import nn
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_state_dict,
    set_state_dict,
)
from torch.distributed.fsdp import FSDPModule, MixedPrecisionPolicy, fully_shard


def shard_units(model: nn.Module) -> list[nn.Module]:
    """The submodules ``fully_shard`` wraps before the root (see the module docstring)."""
    blocks = getattr(model, "blocks", None)
    if isinstance(blocks, nn.ModuleList) and len(blocks):
        return list(blocks)
    return [child for child in model.children()
            if any(p.requires_grad for p in child.parameters())]


#: ``--fsdp-dtype`` -> the dtype FSDP2 gathers parameters and reduces gradients in.
FSDP_DTYPES: dict[str, torch.dtype] = {"bf16": torch.bfloat16, "fp16": torch.float16}


def shard_model(model: nn.Module, dtype: str | None = None) -> nn.Module:
    """``fully_shard`` each unit, then the root; returns the (same, now sharded) model.

    ``dtype`` (``"bf16"``, ``"fp16"``): FSDP2's ``MixedPrecisionPolicy`` with parameters
    gathered and gradients reduced in it (the master weights and the optimizer stay fp32):
    FSDP2's own lossy tier, which halves both collectives and composes with compaction.
    """
    policy = (MixedPrecisionPolicy(param_dtype=FSDP_DTYPES[dtype],
                                   reduce_dtype=FSDP_DTYPES[dtype])
              if dtype is not None else MixedPrecisionPolicy())
    for unit in shard_units(model):
        fully_shard(unit, mp_policy=policy)
    fully_shard(model, mp_policy=policy)
    return model


@contextlib.contextmanager
def without_gradient_sync(model: nn.Module) -> Iterator[None]:
    """A micro-batch that accumulates locally: DDP's ``no_sync()``, or FSDP2's
    ``set_requires_gradient_sync(False)`` for its duration."""
    if isinstance(model, FSDPModule):
        model.set_requires_gradient_sync(False)
        try:
            yield
        finally:
            model.set_requires_gradient_sync(True)
    else:
        with model.no_sync():
            yield


_FULL = StateDictOptions(full_state_dict=True, cpu_offload=True)


def full_state(model: nn.Module, optimizer: torch.optim.Optimizer) -> tuple[dict, dict]:
    """Model and optimizer state as full CPU tensors (a collective: every rank calls it)."""
    return get_state_dict(model, optimizer, options=_FULL)


def load_full_state(model: nn.Module, optimizer: torch.optim.Optimizer,
                    model_state: dict[str, Any], optimizer_state: dict[str, Any]) -> None:
    """Load :func:`full_state`'s output into a sharded model and its optimizer (each rank
    keeps its shards)."""
    set_state_dict(model, optimizer, model_state_dict=model_state,
                   optim_state_dict=optimizer_state,
                   options=StateDictOptions(full_state_dict=True))
