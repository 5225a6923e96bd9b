"""One FSDP2 module's masks in the layout of its collectives, bit-packed.

FSDP2 (torch 2.13, ``_fsdp_collectives.foreach_reduce`` and ``foreach_all_gather``) lays a
module's parameters out the same way for both collectives: each parameter is padded along
dim 0 to a multiple of the world size W and cut into W row blocks; row ``r`` of the
``W x chunk`` buffer is the concatenation, in the module's parameter order, of every
parameter's block ``r`` (its padded shard on rank ``r``). The reduce-scatter's input is that
buffer (``foreach_reduce_scatter_copy_in``); the all-gather's output is that buffer, row
``r`` coming from rank ``r``.

:class:`ShardLayout` holds the same ``W x chunk`` grid of booleans: True where an entry is
kept (a live weight of a pruned parameter, or any entry of a parameter that is not pruned),
False where it is pruned or padding. Every rank builds it from the ranks' mask shards with
one all-gather of the packed bits, so every rank holds the same grid by construction.

Why bit-packed: FSDP2 is for models whose weights do not fit one device, and a boolean per
entry of every module would cost a quarter of the fp32 model on every rank; one bit costs
1/32, and only the module being communicated is unpacked, for the duration of its call.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

#: Bit weights of one packed byte, lowest bit first.
_BITS = torch.tensor([1, 2, 4, 8, 16, 32, 64, 128], dtype=torch.uint8)


def pack_bits(flags: torch.Tensor) -> torch.Tensor:
    """Booleans (any shape) to uint8 bytes, eight flags a byte, lowest bit first."""
    flat = flags.flatten().to(torch.uint8)
    pad = (-flat.numel()) % 8
    if pad:
        flat = torch.cat([flat, flat.new_zeros(pad)])
    return (flat.view(-1, 8) * _BITS.to(flat.device)).sum(1, dtype=torch.uint8)


def unpack_bits(packed: torch.Tensor, count: int) -> torch.Tensor:
    """The first ``count`` booleans of :func:`pack_bits`'s bytes."""
    bits = packed.unsqueeze(1).bitwise_and(_BITS.to(packed.device)).ne(0)
    return bits.flatten()[:count]


@dataclass(frozen=True)
class ShardedParam:
    """One parameter of an FSDP2 module as its collectives see it.

    Attributes:
        param: the sharded parameter (a ``DTensor`` sharded on dim 0).
        padded_numel: entries of its padded shard (the same on every rank).
        local_numel: entries of this rank's real shard (fewer on the last ranks when the
            rows do not divide evenly, possibly none).
    """

    param: torch.nn.Parameter
    padded_numel: int
    local_numel: int


class ShardLayout:
    """The kept entries of one FSDP2 module's collectives (see the module docstring).

    Args:
        params: the module's parameters in FSDP2's order.
        world_size, rank: of the FSDP group.

    Attributes:
        chunk: entries per row (one rank's shards of every parameter, padded).
        kept_per_row: kept entries in each row (W ints).
        width: the most kept entries of any row: each rank's share of the compacted
            buffers (rows are padded to it, so one plain collective moves them).
        version: how many times :meth:`rebuild` ran.
    """

    def __init__(self, params: Sequence[ShardedParam], world_size: int, rank: int) -> None:
        self.params = list(params)
        self.world_size = world_size
        self.rank = rank
        self.chunk = sum(p.padded_numel for p in self.params)
        self.kept_per_row: list[int] = [0] * world_size
        self.width = 0
        self.version = 0
        self._packed = torch.zeros(0, dtype=torch.uint8)

    def local_flags(self, mask_of: Callable[[torch.nn.Parameter], torch.Tensor | None]
                    ) -> torch.Tensor:
        """This rank's row: each parameter's shard mask (all True where ``mask_of`` gives
        ``None``: not pruned), padded with False to the padded shard."""
        pieces = []
        for entry in self.params:
            row = torch.zeros(entry.padded_numel, dtype=torch.bool)
            mask = mask_of(entry.param)
            row[:entry.local_numel] = (True if mask is None
                                       else mask.detach().flatten().to("cpu", torch.bool))
            pieces.append(row)
        return torch.cat(pieces) if pieces else torch.zeros(0, dtype=torch.bool)

    def rebuild(self, gathered_rows: torch.Tensor) -> None:
        """Take the grid from every rank's :meth:`local_flags` (``W x chunk`` booleans,
        row ``r`` from rank ``r``)."""
        grid = gathered_rows.view(self.world_size, self.chunk)
        self.kept_per_row = [int(n) for n in grid.sum(1)]
        self.width = max(self.kept_per_row, default=0)
        self._packed = pack_bits(grid)
        self.version += 1

    def grid(self, device: torch.device | str = "cpu") -> torch.Tensor:
        """The ``W x chunk`` booleans, unpacked (transient: the caller drops them)."""
        flags = unpack_bits(self._packed.to(device), self.world_size * self.chunk)
        return flags.view(self.world_size, self.chunk)

    def slots(self, device: torch.device | str = "cpu") -> torch.Tensor:
        """``W x width`` booleans: True at the places the kept entries of each row take
        in the compacted buffer (the first ``kept_per_row[r]`` of row ``r``)."""
        kept = torch.tensor(self.kept_per_row, device=device)
        return torch.arange(self.width, device=device).unsqueeze(0) < kept.unsqueeze(1)

    def kept_share(self) -> float:
        """Compacted entries (padded to the width) over FSDP2's own: the payload ratio."""
        full = self.world_size * self.chunk
        return self.world_size * self.width / full if full else 1.0

    def fingerprint(self, digest: hashlib._Hash) -> None:
        """Feed the packed grid to ``digest`` (ranks holding equal grids feed equal bytes)."""
        digest.update(self.chunk.to_bytes(8, "little"))
        digest.update(self._packed.numpy().tobytes())
