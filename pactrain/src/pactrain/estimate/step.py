"""A step's time under each method: compute, the local work on its critical path, and the
part of the transfer the backward pass does not hide.

The walk over the buckets (:func:`walk`), per step, in DDP's order: bucket ``i`` reaches
the hook once its share of the backward pass is done
(:attr:`pactrain.estimate.job.Bucket.ready_share`) plus the local work of the hooks
before it (the hook encodes on the thread that runs the backward pass); its collectives
start then, or when the link is free of the bucket before; whatever ends after the
backward pass is exposed. So

    step = compute + local work + max(0, end of the last transfer - end of backward)

The adaptive ``pactrain`` method is priced as it decides
(:class:`pactrain.policy.AdaptivePolicy`): first its operating point
(:func:`pactrain.operating_point.choose`: a send budget when the unpruned gradient
costs more on the link than the step computes), then per bucket the most precise tier
that hides in its gap to the next bucket, else the cheapest. The steady state is
priced: the model at its final sparsity, the link and compute as given.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import pairwise

from pactrain.costs import ComputeCosts
from pactrain.estimate.job import Bucket, Job
from pactrain.estimate.prices import PRICES, BucketPrice, Context, sent_of, tier_price
from pactrain.operating_point import Measured, choose
from pactrain.policy import AdaptivePolicy

#: Methods in the order the report lists them.
METHODS: tuple[str, ...] = ("dense", "fp16", "powersgd", "topk", "dgc", "pactrain",
                            *sorted(m for m in PRICES if m.startswith("pactrain-")))


@dataclass(frozen=True)
class StepEstimate:
    """One method's predicted step (seconds) and what it sends.

    Attributes:
        method: the registry name.
        compute_s: the job's compute per step.
        local_s: the method's local work on the critical path.
        link_s: seconds the link is busy with the step's collectives.
        exposed_s: seconds of them after the backward pass.
        payload_bytes: bytes per rank handed to the collectives.
        tiers: PacTrain's tier per bucket (DDP's order).
        reasons: the adaptive method's operating point, one line per choice.
    """

    method: str
    compute_s: float
    local_s: float
    link_s: float
    exposed_s: float
    payload_bytes: float
    tiers: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()

    @property
    def step_s(self) -> float:
        return self.compute_s + self.local_s + self.exposed_s


def walk(job: Job, buckets: list[Bucket], prices: list[BucketPrice]) -> tuple[float, float, float]:
    """(local work, link busy, exposed) seconds of one step (module docstring)."""
    window = job.backward_share * job.compute_s
    local = link_free = busy = 0.0
    for bucket, price in zip(buckets, prices, strict=True):
        local += price.local_s
        start = max(bucket.ready_share * window + local, link_free)
        link_free = start + price.link_s
        busy += price.link_s
    return local, busy, max(0.0, link_free - (window + local))


def gaps_s(job: Job, buckets: list[Bucket]) -> list[float]:
    """Seconds of backward pass between each bucket's hook call and the next (0 for the
    last): what the adaptive policy measures as each bucket's hide budget."""
    window = job.backward_share * job.compute_s
    shares = [b.ready_share for b in buckets]
    return [(after - now) * window for now, after in pairwise(shares)] + [0.0]


def adaptive(job: Job, buckets: list[Bucket], ctx: Context,
             ) -> tuple[list[BucketPrice], tuple[str, ...]]:
    """The adaptive method's tier per bucket and its operating point's reasons."""
    scaled = ComputeCosts(*(value * ctx.costs.sharing for value in
                            vars(ctx.costs.tiers).values()))
    policy = AdaptivePolicy(link=ctx.link, compute=scaled)
    entries = job.numel

    def price(sent: int) -> float:
        return policy.cheapest(entries, sent, ctx.world_size)

    user = {"send_density": ctx.options.send_density}
    point = choose(price, Measured(job.compute_s, entries, ctx.world_size), user)
    ctx = replace(ctx, send_density=point.send_density)
    prices = []
    for bucket, gap in zip(buckets, gaps_s(job, buckets), strict=True):
        numel, sent = sent_of(bucket, ctx)
        decision = policy.decide(numel, sent, ctx.world_size, policy.hide_fraction * gap)
        prices.append(tier_price(decision.tier, bucket, ctx))
    return prices, point.reasons


def estimate(job: Job, ctx: Context, methods: tuple[str, ...] = METHODS) -> list[StepEstimate]:
    """Each method's predicted step for ``job`` under ``ctx``.

    Raises:
        ValueError: a method that is not priced (the message lists those that are).
    """
    unknown = [m for m in methods if m != "pactrain" and m not in PRICES]
    if unknown:
        raise ValueError(f"no price for {', '.join(unknown)}; priced: {', '.join(METHODS)}")
    buckets = job.buckets()
    out = []
    for method in methods:
        reasons: tuple[str, ...] = ()
        if method == "pactrain":
            prices, reasons = adaptive(job, buckets, ctx)
        else:
            prices = [PRICES[method](b, ctx) for b in buckets]
        local, busy, exposed = walk(job, buckets, prices)
        out.append(StepEstimate(method, job.compute_s, local, busy, exposed,
                                sum(p.payload_bytes for p in prices),
                                tuple(p.tier for p in prices if p.tier), reasons))
    return out


def is_pactrain(method: str) -> bool:
    return method == "pactrain" or method.startswith("pactrain-")


def verdict(estimates: list[StepEstimate], tie: float = 0.05) -> str:
    """One line: whether PacTrain (the adaptive method, else its best tier) pays against
    the best peer, and why (what each exposes on the link, or that the compute sets the
    step). Ratios within ``tie`` of 1 are a tie."""
    ours_all = [e for e in estimates if is_pactrain(e.method)]
    peers = [e for e in estimates if not is_pactrain(e.method)]
    if not ours_all or not peers:
        return "nothing to compare: estimate PacTrain and at least one peer"
    ours = next((e for e in ours_all if e.method == "pactrain"),
                min(ours_all, key=lambda e: e.step_s))
    peer = min(peers, key=lambda e: e.step_s)
    ratio = ours.step_s / peer.step_s
    sides = (f"{ours.method} {ours.step_s:.3f} s a step ({ours.exposed_s:.3f} s of link "
             f"exposed, {ours.local_s:.3f} s of local work) against {peer.method} "
             f"{peer.step_s:.3f} s ({peer.exposed_s:.3f} s exposed, {peer.local_s:.3f} s)")
    if ratio < 1 - tie:
        return f"PacTrain pays, {1 / ratio:.2f}x: {sides}"
    if ratio <= 1 + tie:
        floor = max(ours.exposed_s, peer.exposed_s) < tie * ours.compute_s
        why = (f"the compute ({ours.compute_s:.3f} s) sets the step" if floor else
               "the two expose about as much")
        return f"a tie ({ratio:.2f}x): {why}; {sides}"
    return f"PacTrain does not pay ({ratio:.2f}x the time): {sides}"
