"""What the two 16-bit tiers (``fp16``, ``bf16``) share: divide by N, cast, all-reduce.

Dividing before the cast keeps the sum of N values inside the 16-bit range; the residual
keeps what the cast rounded away (``values - sent x N``).
"""

from __future__ import annotations

import torch

from pactrain.costs import ComputeCosts
from pactrain.tiers.base import HALF, Sent, Tier, TierContext


def half_tier(name: str, dtype: torch.dtype, adaptive_default: bool = True) -> Tier:
    """The tier that sends the entries as ``dtype`` (2 bytes each)."""

    def send(ctx: TierContext, values: torch.Tensor) -> Sent:
        sent = (values / ctx.world_size).to(dtype)
        error = (values - sent.to(torch.float32) * ctx.world_size
                 if ctx.wants_error else None)
        return Sent(ctx.comm.all_reduce(sent).then(lambda f: f.value()[0]), error)

    def local(costs: ComputeCosts, numel: int, sent: int) -> float:
        return (costs.gather_s + costs.cast_s) * sent

    return Tier(name=name, description=f"compacted {name} all-reduce", lossy=True,
                precision=HALF, bytes_per_entry=lambda world_size: 2.0, local_cost=local,
                send=send, adaptive_default=adaptive_default)
