"""``fp32``: the kept entries only, fp32 (exact: the dense average of the masked gradient)."""

from __future__ import annotations

import torch

from pactrain.costs import ComputeCosts
from pactrain.tiers.base import EXACT, Sent, Tier, TierContext


def send(ctx: TierContext, values: torch.Tensor) -> Sent:
    """Divide by N in place and all-reduce: 4 bytes per entry, delivered exactly."""
    values.div_(ctx.world_size)
    return Sent(ctx.comm.all_reduce(values).then(lambda f: f.value()[0]), None)


def _local(costs: ComputeCosts, numel: int, sent: int) -> float:
    return costs.gather_s * sent


TIER = Tier(
    name="fp32", description="compacted fp32 all-reduce (exact)", lossy=False,
    precision=EXACT, bytes_per_entry=lambda world_size: 4.0, local_cost=_local, send=send,
)
