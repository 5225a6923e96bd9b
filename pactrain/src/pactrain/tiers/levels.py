"""What the multi-level code tiers (``quinary``, ``nonary``) share: codes of L levels a
side, packed as carry-free digits.

Protocol (the ternary tiers' scales): the group's MAX scale per chunk, agreed first (or the
sample's), then ``code = sign(v) x floor(L|v| / scale + u)`` with ``u`` the entry's draw
(``P(up) = frac``: unbiased; with the ``nearest`` rounding's halves it rounds to the
nearest level), the N ranks' codes summed as base-(2NL+1) digits of int32 words
(:class:`~pactrain.compression.compressors.RadixPacking` with ``levels=L``); ``average =
sum x scale / (L N)``. A tier is its name and L; the bytes per entry follow from how many
digits an int32 word holds at N workers.
"""

from __future__ import annotations

import functools

import torch

from pactrain.compression.compressors import RadixPacking, level_codes, scale_chunks
from pactrain.costs import ComputeCosts
from pactrain.tiers import ternary
from pactrain.tiers.base import CODES, Tier, TierContext
from pactrain.tiers.packed import Encoder, packed_send


def level_encoder(levels: int) -> Encoder:
    """The encode of codes in [-levels, levels]: int8 codes, the chunks' decode factors
    ``scale / (levels N)`` and, when the context wants it, the error ``values - codes x
    scale / levels`` (formed in ``values``, which it consumes)."""
    def encode(ctx: TierContext, values: torch.Tensor,
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        uniform = ctx.draws()
        step = ternary.agreed_scales(ctx, values) / levels  # one code's worth per chunk
        codes = level_codes(values, step, ctx.bounds, uniform, levels)
        factors = step / ctx.world_size
        if not ctx.wants_error:
            return codes, factors, None
        values.sub_(scale_chunks(codes.to(torch.float32), step, ctx.bounds))
        return codes, factors, values
    return encode


def level_tier(name: str, levels: int) -> Tier:
    """The tier of stochastic codes in [-levels, levels], packed as radix digits; never an
    adaptive default (taken when forced: ``pactrain-<name>``)."""

    @functools.lru_cache(maxsize=16)
    def packing_for(world_size: int) -> RadixPacking:
        return RadixPacking.for_world(world_size, levels)

    def local(costs: ComputeCosts, numel: int, sent: int) -> float:
        return (costs.gather_s + 2 * costs.ternary_s + costs.pack_s) * sent

    bits = 32 / packing_for(4).digits
    return Tier(
        name=name,
        description=f"compacted stochastic {2 * levels + 1}-level codes ({levels} a side of "
                    f"a chunk scale) as carry-free base-(2NL+1) digits of int32 words "
                    f"({bits:.2f} bits per kept entry at 4 workers)",
        lossy=True, precision=CODES,
        bytes_per_entry=lambda world_size: packing_for(world_size).bytes_per_entry,
        extra_bytes=ternary.scale_bytes, local_cost=local,
        send=packed_send(level_encoder(levels), packing_for), collectives=2,
        agrees_scales=True,
        adaptive_default=False,
    )
