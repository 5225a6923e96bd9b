"""The protocols built on the :class:`~pactrain.compression.communicator.Communicator`:
what goes on the wire per rank and bucket for the methods that are more than one
all-reduce.

- :func:`allgather_sparse`: ``k`` fp32 values and ``k`` int32 indices, packed into one
  buffer of ``2k`` 32-bit words, all-gathered (every rank receives everybody's pairs and
  sums them). Indices differ per rank, which is why top-k cannot use all-reduce; the
  traffic grows with the number of workers: about ``(N-1) * 8k`` bytes received per rank.
- :func:`allgather_sparse_mean`: the hook of top-k and DGC around it (per parameter
  slot the method's selection, then the gathered mean).
- :func:`allreduce_ternary`: the scales agreed by one all-reduce MAX, waited for
  (:func:`agree_scales`, fp32, one per tensor of the bucket; PacTrain's ternary tiers agree
  theirs the same way, one per chunk), then one all-reduce SUM of the int8 codes (one byte
  per entry; exact while ``N <= 127``).

Every collective here is launched by the communicator, so it is counted and timed there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.distributed as dist

from pactrain.compression.communicator import Communicator
from pactrain.compression.compressors import (
    Bounds,
    SparseGradient,
    check_int8_sum,
    scale_slots,
    slot_abs_max,
    ternary_codes,
)
from pactrain.compression.memory import BucketSlot


def start_agreement(comm: Communicator, local: torch.Tensor,
                    group: Any = None) -> torch.futures.Future[list[torch.Tensor]]:
    """Launch the MAX of every rank's ternary scales ``local`` (in place) without waiting
    (:func:`agree_scales` is the waiting form): the first half of the ternary summation
    protocol when an :class:`OrderedLauncher` issues the second."""
    return comm.all_reduce(local, "all_reduce_max", dist.ReduceOp.MAX, group)


def allgather_sparse(comm: Communicator, sparse: SparseGradient,
                     ) -> torch.futures.Future[torch.Tensor]:
    """Start the all-gather of ``sparse``; the future gives the dense *sum* over ranks."""
    if sparse.numel >= 2**31:
        raise ValueError("buckets above 2**31 entries need int64 indices; lower bucket_cap_mb")
    packed = torch.cat([sparse.values.float(), sparse.indices.to(torch.int32).view(torch.float32)])
    gathered = [torch.empty_like(packed) for _ in range(comm.world_size)]
    fut = comm.all_gather(gathered, packed)
    k, numel = sparse.values.numel(), sparse.numel

    def decode(_: torch.futures.Future) -> torch.Tensor:
        dense = torch.zeros(numel, dtype=torch.float32, device=packed.device)
        for part in gathered:
            dense.index_add_(0, part[k:].view(torch.int32).long(), part[:k])
        return dense

    return fut.then(decode)


def allgather_sparse_mean(
    comm: Communicator, bucket: dist.GradBucket, slots: Sequence[BucketSlot],
    select: Callable[[BucketSlot, torch.Tensor], SparseGradient],
    on_last: Callable[[], None] | None = None,
) -> torch.futures.Future[torch.Tensor]:
    """The one sparse hook of top-k and DGC: per parameter slot of the bucket, ``select``
    (the method's compensation and selection, given the slot and its gradient slice)
    picks a :class:`SparseGradient`; the bucket's selections are all-gathered
    (:func:`allgather_sparse`) and the future gives their mean over ranks. On the last
    bucket ``on_last`` runs (a method's own step counter), then the step closes."""
    flat = bucket.buffer()
    parts = [(slot.offset, select(slot, flat[slot.offset:slot.offset + slot.numel]))
             for slot in slots]
    sparse = SparseGradient.join(parts, flat.numel())
    if bucket.is_last():
        if on_last is not None:
            on_last()
        comm.end_step()
    world = comm.world_size
    return allgather_sparse(comm, sparse).then(lambda f: f.value().div_(world))


def scale_group_for(process_group: Any, world_size: int) -> Any:
    """A second group over ``process_group``'s ranks for :func:`agree_scales` (``None``
    outside ``torch.distributed`` or alone). Collective: every rank of the group calls it."""
    if not (dist.is_available() and dist.is_initialized()) or world_size <= 1:
        return None
    ranks = None if process_group is None else dist.get_process_group_ranks(process_group)
    return dist.new_group(ranks=ranks)


def agree_scales(comm: Communicator, local: torch.Tensor, group: Any = None) -> torch.Tensor:
    """Every rank's ternary scales become the group's MAX, waited for here: the first half
    of the one ternary summation protocol (PacTrain's ternary tiers and TernGrad). Waiting
    before the codes are formed keeps every collective issued from the hook itself, in
    bucket order on every rank (no collective from a callback, no serializer); on its own
    ``group`` the MAX does not queue behind the previous bucket's codes still on the wire."""
    return start_agreement(comm, local, group).wait()[0]


def allreduce_ternary(comm: Communicator, flat: torch.Tensor, bounds: Bounds,
                      uniform: torch.Tensor, scale_group: Any = None,
                      ) -> torch.futures.Future[torch.Tensor]:
    """Ternary all-reduce of a dense bucket (TernGrad); the future gives the *sum* of the
    dequantised codes.

    1. Per segment (tensor of the bucket, ``bounds``), the local scale ``max |g|``, agreed
       as the group's MAX (:func:`agree_scales`, on ``scale_group``), so every rank
       quantises with the same scale and codes can be summed.
    2. Codes ``sign(g)`` where ``|g| > uniform * scale`` (the compressor's
       :func:`~pactrain.compression.compressors.ternary_codes`; ``uniform`` is consumed);
       all-reduce SUM of the int8 codes.
    3. Dequantise: ``scale * summed_codes``.
    """
    check_int8_sum(comm.world_size, "use fp16 or top-k for larger groups")
    shared = agree_scales(comm, slot_abs_max(flat, bounds).float(), scale_group)
    codes = ternary_codes(flat, scale_slots(uniform, shared, bounds))
    return comm.all_reduce(codes).then(
        lambda f: scale_slots(f.value()[0].float(), shared, bounds))
