"""Communicators: the only code of the baselines that calls collectives.

What goes on the wire, per rank and per bucket:

- :func:`allgather_sparse`: ``k`` fp32 values and ``k`` int32 indices, packed into one
  buffer of ``2k`` 32-bit words, all-gathered (every rank receives everybody's pairs and
  sums them). Indices differ per rank, which is why top-k cannot use all-reduce; the
  traffic grows with the number of workers: about ``(N-1) * 8k`` bytes received per rank.
- :func:`allreduce_ternary`: one all-reduce MAX of the per-tensor scales (fp32, one per
  tensor of the bucket), then one all-reduce SUM of the int8 codes (one byte per entry;
  exact while ``N <= 127``).

Each function adds the payload it hands to collectives to the given counter.

Ordering: gloo matches collectives by the order in which each rank issues them. A hook
that issues a second collective from a future callback (the ternary codes after the
scales; PyTorch's PowerSGD, its P and Q after the uncompressed tensors) races with the
next bucket's first collective, issued by the autograd thread, and ranks can disagree on
the order (gloo aborts: "Received data size doesn't match expected size").
:class:`BucketSerializer` makes each bucket wait for the previous bucket's future before
issuing anything, which keeps the order identical on every rank.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.distributed as dist

from pactrain.accounting import PayloadCounter
from pactrain.baselines.compressors import SparseGradient

MAX_TERNARY_WORKERS = 127


class BucketSerializer:
    """Lets a bucket's collectives start only after the previous bucket's have finished.

    Costs some overlap between communication and the rest of the backward pass, and buys
    an identical collective order on every rank for hooks with chained collectives.
    """

    def __init__(self) -> None:
        self._pending: torch.futures.Future | None = None

    def before(self) -> None:
        """Call at the top of the hook: wait for the previous bucket."""
        if self._pending is not None:
            self._pending.wait()
            self._pending = None

    def after(self, fut: torch.futures.Future) -> torch.futures.Future:
        """Call with the hook's future before returning it."""
        self._pending = fut
        return fut

    def __getstate__(self) -> dict:
        return {}

    def __setstate__(self, state: dict) -> None:
        self._pending = None


def allgather_sparse(
    sparse: SparseGradient,
    group: dist.ProcessGroup | None,
    payload: PayloadCounter,
) -> torch.futures.Future[torch.Tensor]:
    """Start the all-gather of ``sparse``; the future gives the dense *sum* over ranks."""
    if sparse.numel >= 2**31:
        raise ValueError("buckets above 2**31 entries need int64 indices; lower bucket_cap_mb")
    world = dist.get_world_size(group)
    packed = torch.cat([sparse.values.float(), sparse.indices.to(torch.int32).view(torch.float32)])
    gathered = [torch.empty_like(packed) for _ in range(world)]
    payload.add(packed.numel() * packed.element_size(), "all_gather")
    fut = dist.all_gather(gathered, packed, group=group, async_op=True).get_future()
    k, numel = sparse.values.numel(), sparse.numel

    def decode(_: torch.futures.Future) -> torch.Tensor:
        dense = torch.zeros(numel, dtype=torch.float32)
        for part in gathered:
            dense.index_add_(0, part[k:].view(torch.int32).long(), part[:k])
        return dense

    return fut.then(decode)


def allreduce_ternary(
    flat: torch.Tensor,
    segment_lengths: list[int],
    group: dist.ProcessGroup | None,
    payload: PayloadCounter,
    quantize: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
) -> torch.futures.Future[torch.Tensor]:
    """Two-collective ternary all-reduce; the future gives the *sum* of the dequantised codes.

    1. Per segment (tensor of the bucket), the local scale ``max |g|``; all-reduce MAX, so
       every rank quantises with the same scale and the codes can be summed.
    2. ``quantize(flat, per_entry_scale) -> int8 codes``; all-reduce SUM of the codes.
    3. Dequantise: ``scale * summed_codes``.
    """
    world = dist.get_world_size(group)
    if world > MAX_TERNARY_WORKERS:
        raise ValueError(
            f"int8 ternary sums overflow above {MAX_TERNARY_WORKERS} workers (got {world}); "
            "use fp16 or top-k for larger groups"
        )
    lengths = torch.tensor(segment_lengths)
    scales = torch.stack([s.abs().max() for s in torch.split(flat, segment_lengths)]).float()
    payload.add(scales.numel() * scales.element_size(), "all_reduce")
    payload.add(flat.numel(), "all_reduce")  # the int8 codes, one byte each
    fut = dist.all_reduce(scales, op=dist.ReduceOp.MAX, group=group, async_op=True).get_future()

    def quantize_and_sum(done: torch.futures.Future) -> torch.Tensor:
        shared = done.value()[0]
        per_entry = torch.repeat_interleave(shared, lengths)
        codes = quantize(flat, per_entry)
        summed = dist.all_reduce(codes, group=group, async_op=True).get_future().wait()[0]
        return summed.float() * per_entry

    return fut.then(quantize_and_sum)
