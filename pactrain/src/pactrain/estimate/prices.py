"""What one bucket costs under each method: seconds on the link, seconds of local work on
the step's critical path, and payload bytes.

The link is the adaptive policy's alpha-beta model (:class:`pactrain.costs.LinkModel`):
a collective costs ``alpha`` plus ``beta`` per byte each rank sends. A ring all-reduce
sends ``2(N-1)/N`` bytes per payload byte (:func:`pactrain.costs.ring_factor`); an
all-gather ring sends ``(N-1)`` times each rank's part. PacTrain's tiers are priced by
their own declarations (:meth:`pactrain.tiers.base.Tier.price`), the very numbers the
adaptive policy decides with; the peers by what their hooks in :mod:`pactrain.methods`
send and compute.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from pactrain.costs import ComputeCosts, LinkModel
from pactrain.estimate.job import Bucket
from pactrain.tiers import FALLBACK_TIER, TIER_NAMES, get_tier


@dataclass(frozen=True)
class LocalCosts:
    """Seconds of local work per unit, on the hardware the estimate is for.

    Attributes:
        tiers: per-entry costs of PacTrain's tiers
            (:func:`pactrain.policy.probe_compute`).
        gemm_s_per_flop: a matrix product (PowerSGD's factors).
        topk_s_per_entry: ``torch.topk`` over a gradient (top-k, DGC).
        pass_s_per_entry: one elementwise pass over a gradient (a residual's add or copy).
        sharing: workers per core: on a CPU host running more workers than cores, each
            worker's local work takes this many times longer (1 on GPUs).
    """

    tiers: ComputeCosts = field(default_factory=ComputeCosts)
    gemm_s_per_flop: float = 1e-10
    topk_s_per_entry: float = 1e-8
    pass_s_per_entry: float = 1e-9
    sharing: float = 1.0


@dataclass(frozen=True)
class Options:
    """The methods' settings (the bench's defaults, ``pactrain bench --help``).

    Attributes:
        sparsity: PacTrain's final sparsity; top-k and DGC keep ``1 - sparsity`` unless
            ``topk_density`` says otherwise.
        powersgd_rank: PowerSGD's rank.
        topk_density: share of each tensor top-k and DGC send (``None``: ``1 - sparsity``).
        send_density: PacTrain's send budget (``None``: every kept entry; the adaptive
            method chooses its own from the link).
    """

    sparsity: float = 0.8
    powersgd_rank: int = 4
    topk_density: float | None = None
    send_density: float | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.sparsity < 1:
            raise ValueError(f"sparsity must be in [0, 1), got {self.sparsity}")
        if self.powersgd_rank < 1:
            raise ValueError(f"powersgd_rank must be >= 1, got {self.powersgd_rank}")
        for name in ("topk_density", "send_density"):
            value = getattr(self, name)
            if value is not None and not 0 < value <= 1:
                raise ValueError(f"{name} must be in (0, 1], got {value}")

    @property
    def density(self) -> float:
        return 1.0 - self.sparsity

    @property
    def sparse_density(self) -> float:
        return self.density if self.topk_density is None else self.topk_density


@dataclass(frozen=True)
class BucketPrice:
    """One bucket under one method: link seconds (its collectives back to back), local
    seconds on the critical path, payload bytes per rank, and PacTrain's tier."""

    link_s: float
    local_s: float
    payload_bytes: float
    tier: str = ""


@dataclass(frozen=True)
class Context:
    """What a bucket's price depends on beside the bucket.

    Attributes:
        link: the all-reduce's link model.
        costs: local work.
        world_size: workers.
        options: the methods' settings.
        send_density: PacTrain's send budget (the adaptive method's choice).
        gather_link: the all-gather's link model, where it was measured apart
            (:mod:`pactrain.bench.link_probe`; ``None``: ``link``).
    """

    link: LinkModel
    costs: LocalCosts
    world_size: int
    options: Options
    send_density: float | None = None
    gather_link: LinkModel | None = None


def all_reduce_s(ctx: Context, nbytes: float) -> float:
    return ctx.link.all_reduce_time(nbytes, ctx.world_size)


def dense(bucket: Bucket, ctx: Context) -> BucketPrice:
    """DDP's own all-reduce of the fp32 bucket."""
    nbytes = 4.0 * bucket.numel
    return BucketPrice(all_reduce_s(ctx, nbytes), 0.0, nbytes)


def fp16(bucket: Bucket, ctx: Context) -> BucketPrice:
    """The bucket cast to fp16 and back (two passes), 2 bytes an entry."""
    nbytes = 2.0 * bucket.numel
    local = 2 * ctx.costs.tiers.cast_s * bucket.numel * ctx.costs.sharing
    return BucketPrice(all_reduce_s(ctx, nbytes), local, nbytes)


def powersgd(bucket: Bucket, ctx: Context) -> BucketPrice:
    """torch's ``powerSGD_hook``: vectors, and matrices whose factors would not be at least
    twice smaller (``min_compression_rate`` 2), all-reduced uncompressed; the others as P
    (rows x r) and then Q (columns x r), one all-reduce each, one after the other, with
    ``r = min(rank, rows, columns)``. The steady state: the first ``start_iter`` steps
    (2) are plain all-reduces.
    Local: M Q, M^T P and P Q^T (2 x rows x columns x r FLOPs each), Gram-Schmidt of P
    (2 x rows x r^2) and the error feedback's passes (add, subtract) over each matrix."""
    plain, p_entries, q_entries, flops, passes = 0, 0, 0, 0.0, 0
    for tensor in bucket.tensors:
        shape = tensor.matrix
        r = min(ctx.options.powersgd_rank, *shape) if shape else 0
        if shape is None or (shape[0] + shape[1]) * r * 2 >= shape[0] * shape[1]:
            plain += tensor.numel
            continue
        rows, columns = shape
        p_entries += rows * r
        q_entries += columns * r
        flops += 3 * 2.0 * rows * columns * r + 2.0 * rows * r * r
        passes += 2 * tensor.numel
    link = all_reduce_s(ctx, 4.0 * plain) if plain else 0.0
    if p_entries:
        link += all_reduce_s(ctx, 4.0 * p_entries) + all_reduce_s(ctx, 4.0 * q_entries)
    local = (flops * ctx.costs.gemm_s_per_flop
             + passes * ctx.costs.pass_s_per_entry) * ctx.costs.sharing
    return BucketPrice(link, local, 4.0 * (plain + p_entries + q_entries))


def _sparse(bucket: Bucket, ctx: Context, density: float, passes: int,
            topk_share: float = 1.0) -> BucketPrice:
    """Layer-wise top-k sent as (fp32 value, int32 index) pairs by one all-gather
    (:func:`pactrain.compression.protocols.allgather_sparse`): each rank sends its
    part to N - 1 others round the ring; the N parts are added back into a dense bucket."""
    k = sum(math.ceil(density * t.numel) for t in bucket.tensors)
    nbytes = 8.0 * k
    gather = ctx.gather_link or ctx.link
    link = gather.alpha_s + gather.beta_s_per_byte * (ctx.world_size - 1) * nbytes
    local = (ctx.costs.topk_s_per_entry * topk_share * bucket.numel
             + passes * ctx.costs.pass_s_per_entry * bucket.numel
             + ctx.costs.tiers.gather_s * ctx.world_size * k) * ctx.costs.sharing
    return BucketPrice(link, local, nbytes)


def topk(bucket: Bucket, ctx: Context) -> BucketPrice:
    """``topk``: residual added and cleared (2 passes), then top-k per tensor."""
    return _sparse(bucket, ctx, ctx.options.sparse_density, passes=2)


#: Share of a tensor DGC samples to find its threshold (``sample_fraction``,
#: :mod:`pactrain.methods.dgc`).
DGC_SAMPLE = 0.01


def dgc(bucket: Bucket, ctx: Context) -> BucketPrice:
    """``dgc``: the all-gather of top-k after its warm-up; locally momentum correction's
    passes (velocity, accumulation, magnitude, threshold test, factor mask: 5) and a
    top-k over its 1% sample (the threshold) instead of over the whole tensor."""
    return _sparse(bucket, ctx, ctx.options.sparse_density, passes=5, topk_share=DGC_SAMPLE)


def sent_of(bucket: Bucket, ctx: Context) -> tuple[int, int]:
    """(entries, entries sent) of a bucket under PacTrain: the kept entries, capped by
    the send budget (``send_density`` x the bucket's entries)."""
    kept = bucket.kept(ctx.options.density)
    budget = ctx.send_density if ctx.send_density is not None else ctx.options.send_density
    sent = kept if budget is None else min(kept, max(1, int(budget * bucket.numel)))
    return bucket.numel, sent


def tier_price(name: str, bucket: Bucket, ctx: Context) -> BucketPrice:
    """PacTrain's tier ``name``: its declared price (link and local work apart) and its
    payload, as the adaptive policy prices it."""
    tier = get_tier(name)
    numel, sent = sent_of(bucket, ctx)
    local = tier.local_cost(ctx.costs.tiers, numel, sent) * ctx.costs.sharing
    return BucketPrice(tier.link_time(ctx.link, numel, sent, ctx.world_size), local,
                       tier.payload_bytes(numel, sent, ctx.world_size), name)


def forced(name: str) -> Callable[[Bucket, Context], BucketPrice]:
    """The price of ``pactrain-<name>``: every bucket in that tier."""
    def price(bucket: Bucket, ctx: Context) -> BucketPrice:
        return tier_price(name, bucket, ctx)

    price.__doc__ = f"pactrain-{name}: every bucket in the {name} tier."
    return price


#: The peers' bucket prices, by method name (PacTrain's are in :data:`PRICES` too).
PEER_PRICES: dict[str, Callable[[Bucket, Context], BucketPrice]] = {
    "dense": dense, "fp16": fp16, "powersgd": powersgd, "topk": topk, "dgc": dgc,
}

#: Every fixed method's bucket price (the adaptive ``pactrain`` decides per bucket,
#: :mod:`pactrain.estimate.step`).
PRICES: dict[str, Callable[[Bucket, Context], BucketPrice]] = {
    **PEER_PRICES,
    **{f"pactrain-{t}": forced(t) for t in TIER_NAMES if t != FALLBACK_TIER},
}
