"""``topk-ahead``'s chunk maxima, agreed one step before they are used
(:func:`pactrain.compaction.send.send_ahead`)."""

from __future__ import annotations

from typing import Any

import torch

from pactrain.compaction.layout import BucketLayout
from pactrain.compression.compressors import chunk_count


class AheadMaxima:
    """``topk-ahead``'s chunk maxima, agreed one step before they are used.

    Each bucket's MAX for the next step is started right after its codes; nothing waits
    for it until the next step's hook for the bucket takes it (by then it has long
    completed: it was issued a whole step earlier, behind one bucket's codes). Kept per
    bucket layout while the layout holds; spilled into pieces per parameter name when it
    changes (DDP's rebuild, a new mask) and for a checkpoint, so a resumed run in another
    bucket layout picks the same chunks. A parameter whose chunk count changed (a new
    mask) has no piece: its bucket agrees now, once (:func:`~pactrain.compaction.send.send_ahead`).
    """

    def __init__(self) -> None:
        self._pending: dict[int, tuple[BucketLayout, torch.futures.Future]] = {}
        # per parameter name: (mask version it was agreed under, its chunks' maxima)
        self._pieces: dict[str, tuple[int, torch.Tensor]] = {}

    def remember(self, index: int, layout: BucketLayout,
                 future: torch.futures.Future) -> None:
        """Bucket ``index``'s MAX in flight for the next step (its value ``[maxima]``)."""
        self._pending[index] = (layout, future)

    def take(self, index: int, layout: BucketLayout) -> torch.Tensor | None:
        """The maxima agreed for this bucket's kept chunks, or ``None`` (none agreed for
        this layout: the first step, a new mask)."""
        pending = self._pending.get(index)
        if pending is not None and pending[0].key == layout.key:
            return pending[1].wait()[0]
        self._spill()
        version, pieces = layout.key[-1], []
        for slot, (start, end) in zip(layout.slots, layout.bounds, strict=True):
            piece = self._pieces.get(slot.name)
            if (piece is None or piece[0] != version
                    or piece[1].numel() != chunk_count(end - start)):
                return None
            pieces.append(piece[1])
        return torch.cat(pieces) if pieces else None

    def _spill(self) -> None:
        """Every pending bucket's maxima into pieces per parameter name."""
        for layout, future in self._pending.values():
            maxima, at = future.wait()[0], 0  # this step's may be in flight (rare: a rebuild)
            for slot, (start, end) in zip(layout.slots, layout.bounds, strict=True):
                count = chunk_count(end - start)
                self._pieces[slot.name] = (layout.key[-1], maxima[at:at + count].clone())
                at += count
        self._pending.clear()

    def state_dict(self) -> dict[str, Any]:
        self._spill()
        return {"pieces": {name: (version, piece.clone())
                           for name, (version, piece) in self._pieces.items()}}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self._pending.clear()
        self._pieces = {name: (int(version), piece.clone())
                        for name, (version, piece) in state.get("pieces", {}).items()}
