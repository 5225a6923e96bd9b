"""Memories: what a compressor leaves behind locally, to be added back next step.

Buffers are kept per DDP bucket index together with the bucket's *layout* (which
parameter sits where). DDP rebuilds its buckets after the first iteration, in the order
the gradients became ready, so the same bucket index can hold the same parameters at
other offsets: when the layout changes, each parameter's slice of a buffer is moved to its
new place, so nothing remembered is lost or added to the wrong entry. None of them
communicate.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

Layout = tuple[tuple[int, int], ...]  # (parameter key, numel) per tensor, in bucket order


def bucket_layout(parameters: Sequence[torch.Tensor]) -> Layout:
    """The layout of a bucket from ``GradBucket.parameters()`` (keys are object ids)."""
    return tuple((id(p), p.numel()) for p in parameters)


def relayout(buffer: torch.Tensor, old: Layout, new: Layout) -> torch.Tensor:
    """``buffer`` (laid out as ``old``) rearranged as ``new``; unknown parameters get 0."""
    slices, offset = {}, 0
    for key, numel in old:
        slices[key] = buffer[offset:offset + numel]
        offset += numel
    parts = [slices.get(key, torch.zeros(numel, dtype=buffer.dtype)) for key, numel in new]
    return torch.cat(parts) if parts else buffer.new_zeros(0)


class _LayoutKeeper:
    """Per bucket: the layout its buffers are stored in, and remapping on change."""

    def __init__(self) -> None:
        self.layouts: dict[int, Layout] = {}

    def align(
        self, bucket_index: int, layout: Layout | None, buffers: list[dict[int, torch.Tensor]]
    ) -> None:
        old = self.layouts.get(bucket_index)
        if layout is None:
            return
        if old is not None and old != layout:
            for store in buffers:
                if bucket_index in store:
                    store[bucket_index] = relayout(store[bucket_index], old, layout)
        self.layouts[bucket_index] = layout


class ResidualMemory:
    """Error feedback (Seide et al. 2014; Stich et al. 2018): keep what was not sent.

    ``compensate`` returns ``g + residual``; ``update``/``update_sparse`` store
    ``compensated - sent``. Over steps, every dropped part of the gradient is applied.
    """

    def __init__(self) -> None:
        self.residuals: dict[int, torch.Tensor] = {}
        self._layouts = _LayoutKeeper()

    def compensate(
        self, bucket_index: int, flat: torch.Tensor, layout: Layout | None = None
    ) -> torch.Tensor:
        self._layouts.align(bucket_index, layout, [self.residuals])
        residual = self.residuals.get(bucket_index)
        if residual is None or residual.numel() != flat.numel():
            return flat.clone()
        return flat + residual

    def update(self, bucket_index: int, compensated: torch.Tensor, sent: torch.Tensor) -> None:
        self.residuals[bucket_index] = compensated - sent

    def update_sparse(
        self, bucket_index: int, compensated: torch.Tensor, sent_indices: torch.Tensor
    ) -> None:
        """Like ``update`` when exactly the entries at ``sent_indices`` were sent."""
        residual = compensated.clone()
        residual[sent_indices] = 0.0
        self.residuals[bucket_index] = residual

    def state_dict(self) -> dict[str, Any]:
        return {"residuals": {k: v.clone() for k, v in self.residuals.items()}}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.residuals = {int(k): v.clone() for k, v in state["residuals"].items()}


class MomentumCorrectionMemory:
    """DGC's momentum correction and momentum-factor masking (Lin et al. 2018, sec. 3.2).

    Per bucket: ``u = m * u + g`` (local momentum), ``v = v + u`` (accumulated velocity);
    the compressor picks entries of ``v``; for the sent entries both ``v`` and ``u`` are
    cleared, so stale momentum does not keep pushing entries that were already applied.
    The optimizer must then run without its own momentum (it is applied here).
    """

    def __init__(self, momentum: float = 0.9) -> None:
        if not 0.0 <= momentum < 1.0:
            raise ValueError(f"momentum must be in [0, 1), got {momentum}")
        self.momentum = momentum
        self.u: dict[int, torch.Tensor] = {}
        self.v: dict[int, torch.Tensor] = {}
        self._layouts = _LayoutKeeper()

    def compensate(
        self, bucket_index: int, flat: torch.Tensor, layout: Layout | None = None
    ) -> torch.Tensor:
        self._layouts.align(bucket_index, layout, [self.u, self.v])
        u = self.u.get(bucket_index)
        if u is None or u.numel() != flat.numel():
            u = torch.zeros_like(flat)
            self.v[bucket_index] = torch.zeros_like(flat)
        u = u.mul_(self.momentum).add_(flat)
        self.u[bucket_index] = u
        return self.v[bucket_index].add_(u)

    def update_sparse(self, bucket_index: int, sent_indices: torch.Tensor) -> None:
        self.v[bucket_index][sent_indices] = 0.0
        self.u[bucket_index][sent_indices] = 0.0

    def state_dict(self) -> dict[str, Any]:
        return {
            "momentum": self.momentum,
            "u": {k: t.clone() for k, t in self.u.items()},
            "v": {k: t.clone() for k, t in self.v.items()},
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.momentum = float(state["momentum"])
        self.u = {int(k): t.clone() for k, t in state["u"].items()}
        self.v = {int(k): t.clone() for k, t in state["v"].items()}
