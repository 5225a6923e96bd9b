"""The mask tracker of a sharded model: rebuilds the collectives' layouts after each mask
update and verifies that every rank holds the same ones.

Under DDP every rank holds every mask and :class:`pactrain.masks.MaskTracker` compares their
fingerprints. Under FSDP2 each rank holds a different shard of each mask, so what must agree
is what the collectives use: each FSDP module's :class:`~pactrain.fsdp.layout.ShardLayout`
(all-gathered from the shards, so equal by construction) and the per-layer pruned counts.
Their fingerprint is compared with the same 16-byte all-reduce. There is nothing to repair
from rank 0 (its shards are not the others'), so a mismatch raises.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import torch

from pactrain.compression.communicator import Communicator
from pactrain.fsdp.layout import ShardLayout, pack_bits, unpack_bits
from pactrain.fsdp.sharded_pruning import ShardedPruner
from pactrain.masks import MaskMismatchError, MaskTracker


class ShardedMaskTracker(MaskTracker):
    """Versioned, verified masks of a :class:`ShardedPruner`, and the layouts built from
    them.

    Args:
        pruner: owns the mask shards and the schedule.
        process_group: the FSDP group.
        layouts: one per FSDP module with parameters, rebuilt when the masks change.
    """

    def __init__(self, pruner: ShardedPruner, process_group: Any,
                 layouts: Sequence[ShardLayout]) -> None:
        comm = pruner.comm
        super().__init__(pruner, process_group)
        self.comm = comm  # MaskTracker made its own; the pruner's is the method's
        self.layouts = list(layouts)

    @property
    def comm(self) -> Communicator:
        """The communicator of the pruner's agreements and of the layout gathers."""
        return self.pruner.comm

    @comm.setter
    def comm(self, value: Communicator) -> None:
        self.pruner.comm = value

    def rebuild_layouts(self) -> None:
        """Gather every rank's mask shards into each module's layout (one all-gather of
        packed bits per module, counted as control traffic)."""
        pruner = self.pruner
        for layout in self.layouts:
            packed = pack_bits(layout.local_flags(pruner.mask_of))
            gathered = packed.new_empty(layout.world_size * packed.numel())
            self.comm.control_all_gather(gathered, packed, name="mask_layout")
            rows = gathered.view(layout.world_size, packed.numel())
            layout.rebuild(torch.stack([unpack_bits(row, layout.chunk) for row in rows]))

    def fingerprint(self) -> int:
        """64-bit hash of the layouts and the agreed per-layer pruned counts."""
        digest = hashlib.blake2b(digest_size=8)
        for layout in self.layouts:
            layout.fingerprint(digest)
        for name in sorted(self.pruner.pruned_total):
            digest.update(name.encode())
            digest.update(self.pruner.pruned_total[name].to_bytes(8, "little"))
        return int.from_bytes(digest.digest(), "little", signed=True)

    def verify_and_repair(self, optimizer: torch.optim.Optimizer | None = None) -> bool:
        """Rebuild the layouts from the new shards and verify them across ranks.

        Raises:
            MaskMismatchError: the ranks hold different layouts (a rank runs another model
                or pruning config; no rank's shards can stand in for another's).
        """
        self.rebuild_layouts()
        if self.verify():
            return True
        self.mismatches += 1
        raise MaskMismatchError(
            "the ranks' FSDP mask layouts differ; ranks probably run different models or "
            "pruning configs: check that every rank got the same model, sparsity and "
            "checkpoint")

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        self.rebuild_layouts()
