"""``ternary``: stochastic ternary codes of the kept entries, summed as int8 (1 B each).

The one ternary summation protocol (TernGrad's too, :func:`agree_scales`): one MAX scale
per :data:`~pactrain.compression.compressors.SCALE_CHUNK` consecutive entries of each
parameter, agreed on the scale group and waited for here (so every rank issues its
collectives in bucket order), then the codes. Chunks restart at every parameter's entries,
identical on every rank and in every bucket layout, so a resumed run draws the same ones.

Cost per step: a handful of vectorised passes over the entries, no Python per entry or
chunk: the scales are one ``aminmax`` over a (chunks, chunk) view per parameter
(:func:`~pactrain.compression.compressors.chunk_abs_max`); the draws become thresholds
``u x scale`` in place (:func:`~pactrain.compression.compressors.scale_chunks`), and the
codes are ``sign(v)`` where ``|v| > u x scale``
(:func:`~pactrain.compression.compressors.ternary_codes`; a chunk's scale is 0 only where
all its values are, whose codes are then 0); the error is formed in place.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from pactrain.compression.compressors import (
    MAX_TERNARY_WORLD_SIZE,
    chunk_abs_max,
    chunk_count,
    scale_chunks,
    ternary_codes,
)
from pactrain.compression.protocols import agree_scales
from pactrain.costs import ComputeCosts
from pactrain.tiers.base import TERNARY, Sent, Tier, TierContext


def agreed_scales(ctx: TierContext, values: torch.Tensor) -> torch.Tensor:
    """The chunk scales every rank codes with: the sample's, agreed already, or the
    group's MAX of ``max |v|`` per chunk, agreed here (every code tier's first half)."""
    if ctx.scales is not None:
        return ctx.scales
    return agree_scales(ctx.comm, chunk_abs_max(values, ctx.bounds), ctx.scale_group)


def encode(ctx: TierContext, values: torch.Tensor,
           ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """int8 codes of ``values``, the chunks' decode factors ``scale / N`` and, when the
    context wants it, the error ``values - codes x scale`` (formed in ``values``, which it
    consumes)."""
    uniform = ctx.draws()
    scales = agreed_scales(ctx, values)
    codes = ternary_codes(values, scale_chunks(uniform, scales, ctx.bounds))
    if not ctx.wants_error:
        return codes, scales / ctx.world_size, None
    values.sub_(scale_chunks(codes.to(torch.float32), scales, ctx.bounds))
    return codes, scales / ctx.world_size, values


def decoder(ctx: TierContext, factors: torch.Tensor,
            sums: Callable[[torch.futures.Future], torch.Tensor],
            ) -> Callable[[torch.futures.Future], torch.Tensor]:
    """Completion of a ternary all-reduce: average = sum of codes x scale / N."""
    def decode(future: torch.futures.Future) -> torch.Tensor:
        return scale_chunks(sums(future).to(torch.float32), factors, ctx.bounds)
    return decode


def send(ctx: TierContext, values: torch.Tensor) -> Sent:
    """Codes summed as int8 (|sum| <= N <= 127)."""
    codes, factors, error = encode(ctx, values)
    future = ctx.comm.all_reduce(codes).then(decoder(ctx, factors, lambda f: f.value()[0]))
    return Sent(future, error)


def scale_bytes(sent: int) -> float:
    """4 B of fp32 scale per chunk of entries (the MAX all-reduce's payload)."""
    return 4.0 * chunk_count(sent)


def local_cost(costs: ComputeCosts, numel: int, sent: int) -> float:
    return (costs.gather_s + costs.ternary_s) * sent


TIER = Tier(
    name="ternary", description="compacted stochastic ternary int8 all-reduce", lossy=True,
    precision=TERNARY, bytes_per_entry=lambda world_size: 1.0, extra_bytes=scale_bytes,
    local_cost=local_cost, send=send, collectives=2, agrees_scales=True,
    max_world_size=MAX_TERNARY_WORLD_SIZE,
    limit_reason=f"its int8 sums of codes overflow above {MAX_TERNARY_WORLD_SIZE} workers",
)
