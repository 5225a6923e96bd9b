"""``packed``: the ternary tier's codes as carry-free base-(2N+1) digits of int32 words.

Summed by the ordinary int32 all-reduce (:class:`~pactrain.compression.compressors.RadixPacking`):
3.2 bits per entry at N = 4 (10 digits a word), plus the same chunk scales as ``ternary``;
it decodes to exactly what ``ternary`` delivers for the same draws.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import torch

from pactrain.compression.compressors import RadixPacking
from pactrain.costs import ComputeCosts
from pactrain.tiers import ternary
from pactrain.tiers.base import TERNARY, Sent, Tier, TierContext


@functools.lru_cache(maxsize=16)
def packing_for(world_size: int) -> RadixPacking:
    return RadixPacking.for_world(world_size)


Encoder = Callable[[TierContext, torch.Tensor],
                  tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]]


def packed_send(encode: Encoder, packing_of: Callable[[int], RadixPacking],
                ) -> Callable[[TierContext, torch.Tensor], Sent]:
    """The send of a tier whose codes travel as radix digits: ``encode`` (codes, decode
    factors, error), pack, all-reduce the int32 words, unpack and decode on completion
    (``packed``, and ``quinary`` with its own codes and packing)."""
    def send(ctx: TierContext, values: torch.Tensor) -> Sent:
        codes, factors, error = encode(ctx, values)
        packing = packing_of(ctx.world_size)
        count = codes.numel()
        future = ctx.comm.all_reduce(packing.pack(codes), "all_reduce_packed").then(
            ternary.decoder(ctx, factors, lambda f: packing.unpack(f.value()[0], count)))
        return Sent(future, error)
    return send


#: Ternary codes packed, all-reduced as int32 words, unpacked on completion.
send = packed_send(ternary.encode, packing_for)


def _local(costs: ComputeCosts, numel: int, sent: int) -> float:
    return (costs.gather_s + costs.ternary_s + costs.pack_s) * sent


TIER = Tier(
    name="packed",
    description="compacted ternary codes as carry-free base-(2N+1) digits of int32 words "
                "(0.4 B per kept entry at 4 workers)",
    lossy=True, precision=TERNARY,
    bytes_per_entry=lambda world_size: packing_for(world_size).bytes_per_entry,
    extra_bytes=ternary.scale_bytes, local_cost=_local, send=send, collectives=2,
    agrees_scales=True,
)
