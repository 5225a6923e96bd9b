"""Bucket layouts: which flat positions of a DDP bucket survive the masks, and where each
parameter sits in it (the table every other part of the hook reads)."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.distributed as dist

from pactrain.compression.compressors import Bounds, segment_bounds
from pactrain.compression.memory import BucketSlot, ParameterNames
from pactrain.masks import MaskTracker


@dataclass(frozen=True)
class BucketLayout:
    """Which flat positions of one bucket survive the masks.

    Attributes:
        key: (bucket index, bucket size, parameter ids, mask_version): the cache key.
        numel: entries in the bucket.
        kept: int64 flat positions of unpruned entries, ascending.
        flat_mask: bool mask over the whole bucket (True = kept).
        slots: each parameter's canonical name and index and its place in the bucket,
            bucket order (the key of its residual; the index seeds its ternary draws).
        kept_per_slot: kept entries of each slot (sizes of the per-parameter draws).
        bounds: (start, end) of each slot in the compacted buffer.
    """

    key: tuple
    numel: int
    kept: torch.Tensor
    flat_mask: torch.Tensor
    slots: tuple[BucketSlot, ...] = ()
    kept_per_slot: tuple[int, ...] = ()
    bounds: Bounds = ()


def build_layout(bucket: dist.GradBucket, masks: dict[int, torch.Tensor], key: tuple,
                 names: ParameterNames) -> BucketLayout:
    """Lay the parameters' masks out in bucket order (offsets read from the grad views).

    ``names`` gives each parameter its canonical (index, name) in the model, which keys
    per-parameter state that must survive a change of bucket layout; a parameter it does
    not know is named by its place in the bucket.
    """
    buffer = bucket.buffer()
    flat = torch.ones(buffer.numel(), dtype=torch.bool, device=buffer.device)
    base = buffer.data_ptr()
    slots, kept_per_slot, expected = [], [], 0
    for position, (param, grad) in enumerate(
            zip(bucket.parameters(), bucket.gradients(), strict=True)):
        offset = (grad.data_ptr() - base) // grad.element_size()
        if offset != expected or offset + grad.numel() > buffer.numel():
            raise RuntimeError(
                f"gradient of a parameter is not the next slice of bucket {bucket.index()}'s "
                "buffer; this DDP version lays buckets out differently, which PacTrain does "
                "not support"
            )
        expected += grad.numel()
        canonical, name = names.find(param) or (-1 - position,
                                                f"bucket{bucket.index()}.{position}")
        mask = masks.get(id(param))
        if mask is not None:
            flat[offset:offset + grad.numel()] = mask.reshape(-1).to(flat.device)
        slots.append(BucketSlot(name, canonical, offset, grad.numel(), tuple(param.shape)))
        kept_per_slot.append(grad.numel() if mask is None else int(mask.sum()))
    return BucketLayout(key, buffer.numel(), flat.nonzero().squeeze(1), flat,
                        tuple(slots), tuple(kept_per_slot), segment_bounds(kept_per_slot))


class LayoutTable:
    """Each bucket index's layout, rebuilt when its key changes: DDP rebuilds its buckets
    after the first iteration and a new mask bumps ``mask_version``, so the key is checked
    on every lookup (the residuals follow their parameters by name,
    :class:`~pactrain.compression.memory.ResidualMemory`).

    Args:
        tracker: the mask tracker (masks and ``mask_version``).
        names: the parameters' canonical names (:func:`build_layout`).
    """

    def __init__(self, tracker: MaskTracker, names: ParameterNames) -> None:
        self.by_index: dict[int, BucketLayout] = {}
        self._tracker = tracker
        self._names = names
        self._mask_names = {id(p): name for name, p in tracker.pruner.params.items()}

    def find(self, bucket: dist.GradBucket) -> BucketLayout:
        """The bucket's layout, from the table while its key holds."""
        params = bucket.parameters()
        key = (bucket.index(), bucket.buffer().numel(), tuple(id(p) for p in params),
               self._tracker.mask_version)
        cached = self.by_index.get(bucket.index())
        if cached is not None and cached.key == key:
            return cached
        masks = {pid: self._tracker.pruner.masks[name]
                 for pid, name in self._mask_names.items()}
        layout = build_layout(bucket, masks, key, self._names)
        self.by_index[bucket.index()] = layout
        return layout
