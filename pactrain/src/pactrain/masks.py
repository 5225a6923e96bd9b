"""Mask tracker: the same masks on every rank, checked by one tiny collective.

Why: compaction sends only the kept entries, with no indices on the wire, so a rank whose
mask differs would add its values into the wrong positions of everybody's gradient. Masks
are derived from synchronized weights with a deterministic tie-break, so they agree by
construction; the tracker proves it after every update:

1. fingerprint the masks (a 64-bit BLAKE2b hash of the packed mask bits);
2. all-reduce MAX of ``(h, -h)``: one 16-byte collective yields max and min of h;
3. if max != min, broadcast rank 0's masks, log a warning, re-apply them, and verify again;
   a mismatch that survives the repair raises :class:`MaskMismatchError`.

``mask_version`` counts changes of the masks (updates and repairs). Caches (bucket
indices, tier decisions) key on it.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

import numpy as np
import torch
import torch.distributed as dist

from pactrain.compression.communicator import Communicator
from pactrain.devices import collective_device
from pactrain.pruning import GradualPruner

LOG = logging.getLogger(__name__)


class MaskMismatchError(RuntimeError):
    """Masks differ between ranks even after broadcasting rank 0's masks."""


class MaskTracker:
    """Versioned, verified masks of one :class:`GradualPruner` across a process group.

    Args:
        pruner: owns masks and schedule.
        process_group: the group (``None``: the default group; no collective when
            ``torch.distributed`` is not initialized, e.g. in single-process use).

    Attributes:
        comm: the communicator its checks and repairs go through, counted as control
            traffic; its own until a method shares its communicator
            (:func:`pactrain.methods.share_control`), so that a run reports one total.
    """

    def __init__(self, pruner: GradualPruner, process_group: Any = None) -> None:
        self.pruner = pruner
        self.process_group = process_group
        self.comm = Communicator(process_group)
        self.mask_version = 0
        self.verifications = 0
        self.mismatches = 0
        self.repairs = 0
        self.history: list[tuple[int, int, str]] = []  # (step, mask_version, hex fingerprint)

    # -- the step's entry point ----------------------------------------------------------
    def step(self, step: int, optimizer: torch.optim.Optimizer | None = None) -> bool:
        """Before the forward pass of ``step``: update masks if scheduled, verify, apply.

        Returns whether the masks changed (``mask_version`` was bumped).
        """
        if not self.pruner.maybe_update(step):
            return False
        self.mask_version += 1
        self.verify_and_repair()
        self.pruner.apply(optimizer)
        self.history.append((step, self.mask_version, f"{self.fingerprint() & (2**64 - 1):016x}"))
        return True

    # -- verification --------------------------------------------------------------------
    def fingerprint(self) -> int:
        """64-bit signed hash of all masks in name order (identical masks, identical hash)."""
        digest = hashlib.blake2b(digest_size=8)
        for name in sorted(self.pruner.masks):
            bits = self.pruner.masks[name].detach().to("cpu").flatten().numpy()
            digest.update(name.encode())
            digest.update(np.packbits(bits).tobytes())
        return int.from_bytes(digest.digest(), "little", signed=True)

    def _distributed(self) -> bool:
        return dist.is_available() and dist.is_initialized()

    def verify(self) -> bool:
        """One all-reduce MAX of (h, -h); True when every rank holds the same masks."""
        self.verifications += 1
        if not self._distributed():
            return True
        h = self.fingerprint()
        extremes = torch.tensor([h, -h], dtype=torch.int64,
                                device=collective_device(self.process_group))
        self.comm.control_all_reduce(extremes, op=dist.ReduceOp.MAX, name="mask_check")
        return int(extremes[0]) == -int(extremes[1])

    def verify_and_repair(self, optimizer: torch.optim.Optimizer | None = None) -> bool:
        """Verify; on mismatch broadcast rank 0's masks. Returns True if masks agreed at once.

        Raises:
            MaskMismatchError: the masks still differ after the broadcast.
        """
        if self.verify():
            return True
        self.mismatches += 1
        LOG.warning(
            "mask mismatch across ranks at mask_version %d; broadcasting rank 0's masks",
            self.mask_version,
        )
        self.broadcast_from_rank0()
        self.repairs += 1
        self.mask_version += 1
        self.pruner.apply(optimizer)
        if not self.verify():
            raise MaskMismatchError(
                "masks still differ across ranks after broadcasting rank 0's masks; ranks "
                "probably run different models or pruning configs: check that every rank "
                "got the same --model, --sparsity and checkpoint"
            )
        return False

    def broadcast_from_rank0(self) -> None:
        """Overwrite every rank's masks with the group's first rank's, in one broadcast."""
        names = sorted(self.pruner.masks)
        flat = torch.cat([self.pruner.masks[n].flatten().to(torch.uint8) for n in names]
                         ).to(collective_device(self.process_group))
        self.comm.control_broadcast(flat, name="mask_repair")
        offset = 0
        for name in names:
            mask = self.pruner.masks[name]
            self.pruner.masks[name] = flat[offset:offset + mask.numel()].view_as(mask).to(
                mask.device, torch.bool)
            offset += mask.numel()

    # -- checkpoint ----------------------------------------------------------------------
    @property
    def consistent(self) -> bool:
        """True when no verification has ever found differing masks."""
        return self.mismatches == 0

    def state_dict(self) -> dict[str, Any]:
        """Masks, schedule position and ``mask_version``."""
        return {"pruner": self.pruner.state_dict(), "mask_version": self.mask_version}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved (weights must be loaded separately)."""
        self.pruner.load_state_dict(state["pruner"])
        self.mask_version = int(state["mask_version"])
