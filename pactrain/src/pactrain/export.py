"""Sparse export: the pruned model for inference, stored as kept values plus a bitmask.

Why a bitmask and not coordinate or CSR indices: at the densities PacTrain trains to
(5-50% kept) one bit per entry (n/8 bytes) is smaller than an index per kept entry
(CSR's int64 column indices alone cost 8 bytes per kept entry); values stay in their
dtype, so loading gives back the masked dense weights exactly.

File layout (``torch.save`` of a dict, loaded with ``weights_only=True``)::

    {"format": "pactrain-sparse/1",
     "dense":  {name: tensor},                      # biases, norms, unpruned weights
     "sparse": {name: {"shape": int64 tensor, "bitmask": uint8 tensor (packbits, C order),
                       "values": tensor of the kept entries (C order)}}}

:func:`load_sparse` returns an ordinary dense ``state_dict``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

FORMAT = "pactrain-sparse/1"


@dataclass(frozen=True)
class ExportReport:
    """Sizes of one export (bytes): the dense weights against the sparse file."""

    dense_bytes: int
    file_bytes: int
    sparse_tensors: int
    density: float


def masks_of(checkpoint: dict[str, Any]) -> dict[str, torch.Tensor]:
    """The pruning masks a checkpoint carries under ``pactrain``: one
    :meth:`pactrain.PacTrain.state_dict` (a user's ``{"pactrain": pt.state_dict()}``) or a
    list of them, one per rank (``pactrain train --checkpoint``; masks are the same on
    every rank, so the first is read).

    Raises:
        ValueError: the checkpoint has no masks (a method that does not prune).
    """
    state = checkpoint.get("pactrain")
    if isinstance(state, list):
        state = state[0] if state else None
    tracker = state.get("tracker") if isinstance(state, dict) else None
    masks = ((tracker or {}).get("pruner") or {}).get("masks")
    if not masks:
        raise ValueError("this checkpoint has no pruning masks (it was written by a method "
                         "that does not prune, or is not a PacTrain checkpoint); nothing to "
                         "export sparsely")
    return {name: mask.to(torch.bool) for name, mask in masks.items()}


def sparse_state(state: dict[str, torch.Tensor], masks: dict[str, torch.Tensor],
                 ) -> dict[str, Any]:
    """Split ``state`` into dense tensors and masked tensors (kept values + bitmask)."""
    missing = sorted(set(masks) - set(state))
    if missing:
        raise ValueError(f"masks name tensors the model does not have: {missing[:3]}")
    dense, sparse = {}, {}
    for name, tensor in state.items():
        mask = masks.get(name)
        if mask is None:
            dense[name] = tensor.detach().cpu().contiguous()
            continue
        if mask.shape != tensor.shape:
            raise ValueError(f"mask of {name} has shape {tuple(mask.shape)}, the tensor "
                             f"{tuple(tensor.shape)}")
        flat = mask.reshape(-1).cpu()
        sparse[name] = {
            "shape": torch.tensor(tensor.shape, dtype=torch.int64),
            "bitmask": torch.from_numpy(np.packbits(flat.numpy())),
            "values": tensor.detach().cpu().reshape(-1)[flat].clone(),
        }
    return {"format": FORMAT, "dense": dense, "sparse": sparse}


def load_sparse(path: str | Path) -> dict[str, torch.Tensor]:
    """Read an export back into a dense ``state_dict`` (pruned entries exactly 0)."""
    blob = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(blob, dict) or blob.get("format") != FORMAT:
        raise ValueError(f"{path} is not a PacTrain sparse export ({FORMAT})")
    state = dict(blob["dense"])
    for name, entry in blob["sparse"].items():
        shape = tuple(int(n) for n in entry["shape"])
        count = int(np.prod(shape))
        kept = torch.from_numpy(np.unpackbits(entry["bitmask"].numpy(), count=count)
                                .astype(bool))
        values = entry["values"]
        full = torch.zeros(count, dtype=values.dtype)
        full[kept] = values
        state[name] = full.reshape(shape)
    return state


def export_checkpoint(checkpoint_path: str | Path, out: str | Path) -> ExportReport:
    """Write the pruned model of ``checkpoint_path`` to ``out`` and report the sizes."""
    checkpoint = torch.load(checkpoint_path, map_location="cpu", weights_only=False)
    if not isinstance(checkpoint, dict) or "model" not in checkpoint:
        raise ValueError(f"{checkpoint_path} holds no model state (expected a dict with "
                         "'model', as `pactrain train --checkpoint` writes)")
    masks = masks_of(checkpoint)
    blob = sparse_state(checkpoint["model"], masks)
    torch.save(blob, out)
    dense_bytes = sum(t.numel() * t.element_size() for t in checkpoint["model"].values())
    kept = sum(int(m.sum()) for m in masks.values())
    total = sum(m.numel() for m in masks.values())
    return ExportReport(dense_bytes, Path(out).stat().st_size, len(blob["sparse"]),
                        kept / total if total else 1.0)
