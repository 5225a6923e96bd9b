"""FSDP2's reduce-scatter and all-gather, counted, and compacted by the masks.

FSDP2 calls a module's comms through the interfaces of
``torch.distributed.fsdp._fully_shard._fsdp_api`` (``ReduceScatter``, ``AllGather``), which
``FSDPModule.set_custom_reduce_scatter`` / ``set_custom_all_gather`` replace per module. The
buffers are the ``W x chunk`` layout of :mod:`pactrain.fsdp.layout`.

- :class:`CountedReduceScatter`, :class:`CountedAllGather`: FSDP2's own collectives, through
  the communicator, so the reference run counts its bytes the way PacTrain's does.
- :class:`MaskedReduceScatter`: each row's kept entries go to the front of a
  ``W x width`` buffer (``width``: the most kept entries of any row), which one plain
  reduce-scatter sums; each rank scatters its ``width`` sums back to its kept positions and
  zeros the rest. Every kept entry is summed from the same values as in FSDP2's own
  reduce-scatter, and pruned entries come out zero, which is what the optimizer sees after
  masking either way. The rows stay padded here: an all-to-all with a local sum would
  carry the uneven rows, but gloo's reduce-scatter sums in its all-reduce's order (checked:
  its result equals the all-reduce's slice, not a sum in rank order), and only the same
  collective keeps the result bit-equal to FSDP2's on more than two ranks.
- :class:`MaskedAllGather`: each rank sends its shard's kept entries, and every rank places
  each row's entries back at that row's kept positions. Rows keep different counts (a
  layer's dim-0 blocks are pruned unevenly: attention's stacked Q, K and V rows differ), so
  this is an all-to-all of uneven rows (gloo's and NCCL's ``all_to_all_single``), which
  carries the kept entries exactly, where an all-gather would pad every row to the widest
  (measured on gpt-tiny at 80%: 0.252 of FSDP2's bytes padded against 0.242 uneven on 2
  ranks, 0.267 against 0.238 on 4). Pruned weights are zero, so the unsharded parameters
  are bit-equal to FSDP2's own.

Neither sends an index: the positions are in the layout every rank already holds. A buffer
whose size is not the layout's (a module some of whose parameters got no gradient this
step, or an all-gather of mixed dtypes packed as bytes) goes through the plain collective,
counted apart as ``*_dense``, on every rank alike (the condition is the same on all).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import torch.distributed as dist
from torch.distributed.fsdp._fully_shard._fsdp_api import AllGather, ReduceScatter

from pactrain.compression.communicator import Communicator
from pactrain.fsdp.layout import ShardLayout


class _Allocating:
    """Comms allocate plain tensors (FSDP2's ``DefaultAllocMixin`` does the same)."""

    def allocate(self, size: Sequence[int], *, dtype: torch.dtype,
                 device: torch.device) -> torch.Tensor:
        return torch.empty(*size, dtype=dtype, device=device)


class CountedReduceScatter(_Allocating, ReduceScatter):
    """FSDP2's reduce-scatter through ``comm`` (counted and timed)."""

    def __init__(self, comm: Communicator) -> None:
        self.comm = comm

    def __call__(self, output_tensor: torch.Tensor, input_tensor: torch.Tensor,
                 group: dist.ProcessGroup, op: Any, async_op: bool = False) -> None:
        self.comm.reduce_scatter(output_tensor, input_tensor, op, group=group)


class CountedAllGather(_Allocating, AllGather):
    """FSDP2's all-gather through ``comm`` (counted and timed)."""

    def __init__(self, comm: Communicator) -> None:
        self.comm = comm

    def __call__(self, output_tensor: torch.Tensor, input_tensor: torch.Tensor,
                 group: dist.ProcessGroup, async_op: bool = False) -> None:
        self.comm.all_gather_into(output_tensor, input_tensor, group=group)


class MaskedReduceScatter(_Allocating, ReduceScatter):
    """The reduce-scatter of one FSDP module's gradients, kept entries only."""

    def __init__(self, comm: Communicator, layout: ShardLayout) -> None:
        self.comm = comm
        self.layout = layout

    @torch.no_grad()
    def __call__(self, output_tensor: torch.Tensor, input_tensor: torch.Tensor,
                 group: dist.ProcessGroup, op: Any, async_op: bool = False) -> None:
        layout = self.layout
        if (input_tensor.numel() != layout.world_size * layout.chunk
                or output_tensor.numel() != layout.chunk):
            self.comm.reduce_scatter(output_tensor, input_tensor, op, group=group,
                                     name="reduce_scatter_dense")
            return
        device = input_tensor.device
        grid = layout.grid(device)
        packed = input_tensor.new_zeros(layout.world_size, layout.width)
        packed[layout.slots(device)] = input_tensor.view(layout.world_size, layout.chunk)[grid]
        summed = input_tensor.new_empty(layout.width)
        self.comm.reduce_scatter(summed, packed.view(-1), op, group=group)
        own = grid[layout.rank]
        output_tensor.zero_()
        output_tensor[own] = summed[:layout.kept_per_row[layout.rank]]


class MaskedAllGather(_Allocating, AllGather):
    """The all-gather of one FSDP module's parameters, kept entries only."""

    def __init__(self, comm: Communicator, layout: ShardLayout) -> None:
        self.comm = comm
        self.layout = layout

    @torch.no_grad()
    def __call__(self, output_tensor: torch.Tensor, input_tensor: torch.Tensor,
                 group: dist.ProcessGroup, async_op: bool = False) -> None:
        layout = self.layout
        if (input_tensor.numel() != layout.chunk
                or output_tensor.numel() != layout.world_size * layout.chunk):
            self.comm.all_gather_into(output_tensor, input_tensor, group=group,
                                      name="all_gather_dense")
            return
        device = input_tensor.device
        grid = layout.grid(device)
        kept = layout.kept_per_row
        mine = input_tensor[grid[layout.rank]]  # a copy: the input may alias the output
        gathered = input_tensor.new_empty(sum(kept))
        self.comm.all_to_all(gathered, mine.repeat(layout.world_size), kept,
                             [mine.numel()] * layout.world_size, name="all_gather",
                             group=group)
        rows = output_tensor.view(layout.world_size, layout.chunk)
        rows.zero_()
        rows[grid] = gathered
