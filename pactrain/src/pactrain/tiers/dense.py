"""``dense``: the whole bucket in fp32, pruned entries zeroed (the fallback).

Cheapest when little is pruned: no gather or scatter, one all-reduce of 4 bytes per entry
of the bucket, kept or not.
"""

from __future__ import annotations

import torch

from pactrain.compression.compressors import mask_multiplier
from pactrain.costs import ComputeCosts
from pactrain.tiers.base import EXACT, Tier, TierContext


def send_bucket(ctx: TierContext, buffer: torch.Tensor,
                flat_mask: torch.Tensor) -> torch.futures.Future:
    """Zero the pruned entries, divide by N, all-reduce the bucket in place."""
    buffer.mul_(mask_multiplier(flat_mask)).div_(ctx.world_size)
    return ctx.comm.all_reduce(buffer).then(lambda f: f.value()[0])


def _local(costs: ComputeCosts, numel: int, sent: int) -> float:
    return costs.mask_s * numel


TIER = Tier(
    name="dense", description="the whole bucket in fp32, pruned entries zeroed",
    lossy=False, precision=EXACT, bytes_per_entry=lambda world_size: 4.0,
    local_cost=_local, send_bucket=send_bucket,
)
