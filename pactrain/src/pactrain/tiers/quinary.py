"""``quinary``: stochastic codes in {-2, -1, 0, 1, 2} (half a chunk scale a step), packed.

Why a tier between ``packed`` and ``fp16``: the ternary codes' rounding noise is what
PacTrain pays in steps on short links (docs/pactrain-bench.md). With one level more a side
an entry far below its chunk's scale is rounded over half the distance: on a fashion-cnn
gradient (chunks of 256 kept entries) the error's energy is 0.38 of the gradient's against
1.34 for ternary codes (docs/pactrain-bench.md, 2026-12-06), for 4.57 bits an entry
instead of 3.2 at N = 4 (7 base-17 digits a word,
:class:`~pactrain.compression.compressors.RadixPacking` with ``levels=2``).

Protocol: the ternary tiers' (the group's MAX scale per chunk, agreed first, or the
sample's), then ``code = sign(v) x floor(2|v| / scale + u)`` with ``u`` the entry's draw
(``P(up) = frac``: unbiased; with the ``nearest`` rounding's halves it rounds to the
nearest level), the codes summed as carry-free digits; ``average = sum x scale / 2N``.
Not an adaptive default: the policy takes it only when told (``pactrain-quinary``).
"""

from __future__ import annotations

import functools

import torch

from pactrain.compression.compressors import RadixPacking, level_codes, scale_chunks
from pactrain.costs import ComputeCosts
from pactrain.tiers import ternary
from pactrain.tiers.base import CODES, Tier, TierContext
from pactrain.tiers.packed import packed_send

#: Code magnitudes a side: codes in [-LEVELS, LEVELS].
LEVELS = 2


@functools.lru_cache(maxsize=16)
def packing_for(world_size: int) -> RadixPacking:
    return RadixPacking.for_world(world_size, LEVELS)


def encode(ctx: TierContext, values: torch.Tensor,
           ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """int8 codes of ``values`` in [-2, 2], the chunks' decode factors ``scale / 2N`` and,
    when the context wants it, the error ``values - codes x scale / 2`` (formed in
    ``values``, which it consumes)."""
    uniform = ctx.draws()
    step = ternary.agreed_scales(ctx, values) / LEVELS  # one code's worth per chunk
    codes = level_codes(values, step, ctx.bounds, uniform, LEVELS)
    factors = step / ctx.world_size
    if not ctx.wants_error:
        return codes, factors, None
    values.sub_(scale_chunks(codes.to(torch.float32), step, ctx.bounds))
    return codes, factors, values


#: Codes packed as base-(4N+1) digits, all-reduced as int32 words, unpacked on completion.
send = packed_send(encode, packing_for)


def _local(costs: ComputeCosts, numel: int, sent: int) -> float:
    return (costs.gather_s + 2 * costs.ternary_s + costs.pack_s) * sent


TIER = Tier(
    name="quinary",
    description="compacted stochastic 5-level codes (half a chunk scale a step) as "
                "carry-free base-(4N+1) digits of int32 words (0.57 B per kept entry at "
                "4 workers)",
    lossy=True, precision=CODES,
    bytes_per_entry=lambda world_size: packing_for(world_size).bytes_per_entry,
    extra_bytes=ternary.scale_bytes, local_cost=_local, send=send, collectives=2,
    adaptive_default=False,
)
