"""Adaptive tier policy: an alpha-beta model of the link plus each bucket's density.

Why: compaction alone is ideal in bytes, but whether fewer bytes pay off depends on the
link. On a fast link a small bucket costs mostly latency (alpha) and the gather/scatter
of compaction is pure overhead; on a slow link every byte counts (beta) and even the
ternary tier's extra latency is worth its 4x saving. Each tier declares its price
(:meth:`pactrain.tiers.base.Tier.price`, from its module in :mod:`pactrain.tiers`), one
formula for all:

    price = collectives x alpha + beta x 2(N-1)/N x payload bytes + local work

with the payload ``bytes_per_entry(N) x k + extra_bytes(k)`` (n entries in the bucket, k
sent: the kept ones, or this step's sample of them under ``send_density``; the whole
bucket for the fallback) and the local work per entry from :func:`probe_compute`. Each
tier's terms are in the generated table of docs/pactrain-core.md
(:mod:`pactrain.tiers.table`), so no list here goes stale. A
lossy tier is chosen only when it beats the best lossless tier by ``lossy_margin``, so
accuracy is not traded for noise-level gains.

Overlap: time the link spends while the backward pass still computes is free. DDP hands
buckets to the hook as their gradients become ready; bucket b's transfer hides entirely
if it ends before bucket b+1 is ready (then the link is idle again when b+1 arrives and
no transfer queues). So each bucket gets a *hide budget*: ``hide_fraction`` x the
measured gap between its hook call and the next bucket's (:meth:`AdaptivePolicy.plan_overlap`;
the last bucket's budget is 0: nothing computes after it). Within its budget a bucket
takes the most precise tier that fits (by the tiers' declared precision levels,
:func:`precision_levels`: exact, then half, then the multi-level codes, then the ternary
codes), else the cheapest as above. Measured on resnet18 at 100 Mbit/s this is what lets
the early, large buckets travel in fp16 under the backward pass instead of as ternary
codes, at no cost in step time.

Alpha and beta are measured at start-up (:func:`probe_link`) and refreshed from the
durations of the hook's own collectives (:meth:`AdaptivePolicy.refresh`). Every rank must
decide identically (compacted buffers must match in size and dtype), so every measured
number is agreed on by an all-reduce before it is used.
"""

from __future__ import annotations

import logging
import statistics
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import torch
import torch.distributed as dist

from pactrain.compression.communicator import Communicator
from pactrain.compression.compressors import RadixPacking, mask_multiplier, ternary_codes
from pactrain.costs import ComputeCosts, LinkModel, ring_factor
from pactrain.devices import collective_device
from pactrain.tiers import TIER_NAMES, all_tiers

LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class TierDecision:
    """The tier chosen for a bucket and the price of every candidate (seconds)."""

    tier: str
    numel: int
    kept: int
    costs: dict[str, float]

    @property
    def density(self) -> float:
        return self.kept / self.numel if self.numel else 1.0


def agree_numbers(values: list[float], comm: Communicator, op: Any) -> list[float]:
    """All ranks adopt the same numbers (MAX or average) so their decisions match; one
    control all-reduce of the communicator (counted in its ``control`` bytes)."""
    if not comm.distributed:
        return values
    tensor = torch.tensor(values, dtype=torch.float64,
                          device=collective_device(comm.process_group))
    comm.control_all_reduce(tensor, op=op, name="policy")
    if op == dist.ReduceOp.SUM:
        tensor /= comm.world_size
    return tensor.tolist()


def fit_alpha_beta(small_s: float, large_s: float, small: int, large: int,
                   per_byte: float) -> tuple[float, float]:
    """(alpha, beta) through the timings of a collective of ``small`` and of ``large``
    fp32 entries; ``per_byte``: bytes each rank sends per payload byte (the ring factor
    for an all-reduce, N - 1 for an all-gather)."""
    beta = max(large_s - small_s, 0.0) / (per_byte * 4 * (large - small))
    return max(small_s - beta * per_byte * 4 * small, 1e-7), max(beta, 1e-13)


def probe_link(
    comm: Communicator, small: int = 64, large: int = 131072, repeats: int = 5,
) -> LinkModel:
    """Time all-reduces of ``small`` and ``large`` fp32 entries; fit alpha and beta.

    Collective: every rank of the group must call it. Medians of ``repeats`` timings after
    one warm-up; the group agrees on the MAX of each estimate (the slowest link decides).
    """
    ring = ring_factor(comm.world_size)

    def timed(n: int) -> float:
        buf = torch.zeros(n, dtype=torch.float32,
                          device=collective_device(comm.process_group))
        comm.control_all_reduce(buf, name="probe")
        samples = []
        for _ in range(repeats):
            start = time.perf_counter()
            comm.control_all_reduce(buf, name="probe")
            samples.append(time.perf_counter() - start)
        return statistics.median(samples)

    alpha, beta = fit_alpha_beta(timed(small), timed(large), small, large, ring)
    alpha, beta = agree_numbers([alpha, beta], comm, dist.ReduceOp.MAX)
    return LinkModel(alpha, beta)


#: Seconds the large message of a refresh's probe should take on the current link model.
REFRESH_PROBE_S = 0.05

#: Bounds of that message (fp32 entries): the start-up probe's size at most.
REFRESH_PROBE_ENTRIES: tuple[int, int] = (4096, 131072)


def refresh_probe_entries(link: LinkModel, world_size: int) -> int:
    """Entries of a refresh probe's large all-reduce: what takes about
    :data:`REFRESH_PROBE_S` on ``link``, within :data:`REFRESH_PROBE_ENTRIES`.

    Why: the start-up probe's 512 KB message takes 0.6 s at 10 Mbit/s (4 workers) and a
    refresh sends it 4 times, every 50 steps: on fashion-cnn that was 38 s of an 800-step
    run, 0.048 s a step of the 0.254 s the adaptive method took (2026-12-07). A message
    sized to the link keeps the fit's resolution where it matters and the cost near
    0.25 s a refresh.
    """
    low, high = REFRESH_PROBE_ENTRIES
    per_entry = 4 * ring_factor(world_size) * link.beta_s_per_byte
    if per_entry <= 0:
        return high
    return int(min(high, max(low, REFRESH_PROBE_S / per_entry)))


def probe_compute(comm: Communicator, n: int = 1 << 18, density: float = 0.25,
                  seed: int = 0) -> ComputeCosts:
    """Time each tier's local work per element on this machine (group agrees on MAX)."""
    generator = torch.Generator().manual_seed(seed)
    buffer = torch.randn(n, generator=generator)
    mask = torch.rand(n, generator=generator) < density
    kept = mask.nonzero().squeeze(1)

    def per_element(fn: Any, count: int) -> float:
        fn()
        start = time.perf_counter()
        for _ in range(3):
            fn()
        return (time.perf_counter() - start) / (3 * max(count, 1))

    def gather_scatter() -> None:
        values = buffer.index_select(0, kept)
        out = torch.zeros_like(buffer)
        out.index_copy_(0, kept, values)

    values = buffer.index_select(0, kept)
    uniform = torch.rand(values.numel(), generator=generator)
    scale = values.abs().max()
    codes = torch.sign(values).to(torch.int8)
    world_size = comm.world_size if comm.distributed else 1
    packing = RadixPacking.for_world(world_size)
    costs = [
        per_element(lambda: buffer.mul(mask_multiplier(mask)), n),
        per_element(gather_scatter, kept.numel()),
        per_element(lambda: values.half().float(), kept.numel()),
        # the hook's own kernels: thresholds u x s, then the two-comparison codes
        per_element(lambda: ternary_codes(values, uniform * scale), kept.numel()),
        per_element(lambda: packing.unpack(packing.pack(codes), codes.numel()), codes.numel()),
    ]
    costs = agree_numbers(costs, comm, dist.ReduceOp.MAX)
    return ComputeCosts(*costs)


def precision_levels() -> tuple[frozenset[str], ...]:
    """Tiers by what they deliver, most precise first (one level may hold several tiers;
    within a level the cheapest wins), from each tier's declared precision."""
    tiers = all_tiers().values()
    return tuple(frozenset(t.name for t in tiers if t.precision == level)
                 for level in sorted({t.precision for t in tiers}))


def adaptive_tiers() -> tuple[str, ...]:
    """The tiers the adaptive policy picks from unless told otherwise."""
    return tuple(t.name for t in all_tiers().values() if t.adaptive_default)


class MeasuresNothing:
    """The policy calls of a policy that follows no measurement (a fixed tier, a replayed
    plan, :class:`pactrain.plan.ReplayPolicy`): no hide budget, and timings, gaps and
    refreshes are ignored."""

    def hide_budget(self, index: int) -> float:
        return 0.0

    def plan_overlap(self, gaps_s: dict[int, float], comm: Communicator) -> None:
        """The backward pass's timing decides nothing here."""

    def observe(self, nbytes: int, seconds: float) -> None:
        """Timings decide nothing here."""

    def refresh(self, comm: Communicator) -> None:
        """Nothing to refresh."""


@dataclass
class FixedPolicy(MeasuresNothing):
    """Always the same tier (``pactrain-fp32``, ``pactrain-ternary``, ...)."""

    tier: str
    version: int = 0

    def decide(self, numel: int, kept: int, world_size: int,
               budget_s: float = 0.0) -> TierDecision:
        return TierDecision(self.tier, numel, kept, {})

    def state_dict(self) -> dict[str, Any]:
        return {"tier": self.tier}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.tier = state["tier"]


@dataclass
class AdaptivePolicy:
    """Cheapest tier per bucket under the measured link and compute costs.

    Attributes:
        link: the alpha-beta model (agreed by all ranks).
        compute: per-element local costs (agreed by all ranks).
        allowed: tiers it may choose.
        lossy_margin: a lossy tier must be this many times cheaper than the best lossless.
        blend: weight of a new link estimate in a refresh (the rest stays with the old).
        version: bumped on each refresh or overlap plan; decision caches key on it.
        hide_fraction: share of a bucket's measured gap its transfer may use (the rest is
            the margin for timing noise and the hook's own work).
        budgets_s: hide budget per bucket index (seconds; empty until planned).
    """

    link: LinkModel = field(default_factory=LinkModel)
    compute: ComputeCosts = field(default_factory=ComputeCosts)
    allowed: tuple[str, ...] = field(default_factory=adaptive_tiers)
    lossy_margin: float = 1.25
    blend: float = 0.5
    version: int = 0
    hide_fraction: float = 0.8
    budgets_s: dict[int, float] = field(default_factory=dict)
    observations: list[tuple[int, float]] = field(default_factory=list)

    def __post_init__(self) -> None:
        unknown = set(self.allowed) - set(TIER_NAMES)
        if unknown or not self.allowed:
            raise ValueError(f"allowed tiers {sorted(unknown)} unknown; choose from "
                             f"{TIER_NAMES}")
        self._tiers = all_tiers()
        self._levels = precision_levels()

    def costs(self, numel: int, kept: int, world_size: int) -> dict[str, float]:
        """Predicted seconds of each allowed tier for one bucket of ``numel`` entries of
        which ``kept`` travel (each tier's declared price,
        :meth:`pactrain.tiers.base.Tier.price`)."""
        return {name: self._tiers[name].price(self.link, self.compute, numel, kept, world_size)
                for name in self.allowed}

    def cheapest(self, numel: int, kept: int, world_size: int) -> float:
        """The least predicted seconds of any allowed tier for the bucket (what sending it
        costs at best: the operating point's price of a send,
        :data:`pactrain.operating_point.PriceOfSending`)."""
        return min(self.costs(numel, kept, world_size).values())

    def decide(self, numel: int, kept: int, world_size: int,
               budget_s: float = 0.0) -> TierDecision:
        """The most precise tier whose price fits ``budget_s`` (the time the backward
        pass hides), else the cheapest (a lossy one only if ``lossy_margin`` x cheaper
        than the best lossless)."""
        costs = self.costs(numel, kept, world_size)
        for level in self._levels:
            hidden = {k: v for k, v in costs.items() if k in level and v <= budget_s}
            if hidden:
                return TierDecision(min(hidden, key=hidden.__getitem__), numel, kept, costs)
        lossless = {k: v for k, v in costs.items() if not self._tiers[k].lossy}
        lossy = {k: v for k, v in costs.items() if self._tiers[k].lossy}
        best = min(lossless, key=lossless.__getitem__) if lossless else None
        if lossy:
            cheapest_lossy = min(lossy, key=lossy.__getitem__)
            if best is None or lossy[cheapest_lossy] * self.lossy_margin < lossless[best]:
                best = cheapest_lossy
        assert best is not None
        return TierDecision(best, numel, kept, costs)

    def hide_budget(self, index: int) -> float:
        """Seconds bucket ``index``'s transfer may take and still hide (0 unplanned)."""
        return self.budgets_s.get(index, 0.0)

    def plan_overlap(self, gaps_s: dict[int, float], comm: Communicator) -> None:
        """Set each bucket's hide budget from its measured gaps (seconds from its hook
        call to the next bucket's, 0 for the last); the group averages them.

        Collective: every rank calls it at the same step with the same bucket indices.
        """
        indices = sorted(gaps_s)
        agreed = agree_numbers([gaps_s[i] for i in indices], comm, dist.ReduceOp.SUM)
        self.budgets_s = {i: self.hide_fraction * max(g, 0.0)
                          for i, g in zip(indices, agreed, strict=True)}
        self.version += 1

    def observe(self, nbytes: int, seconds: float) -> None:
        """Record one collective's payload and duration (launch to completion)."""
        self.observations.append((nbytes, seconds))
        del self.observations[:-256]

    def refresh(self, comm: Communicator) -> None:
        """Fit alpha-beta to recent observations and agree on the group's average.

        Collective: all ranks call it at the same step. An observed duration runs from
        launch to completion, so it also holds the wait for the slowest rank to reach the
        collective; the fastest observation of each payload size is the one closest to the
        link's own time, so the fit uses per-size minima. With one size alpha and beta
        cannot be told apart: both are scaled by observed/predicted (clamped to [1/4, 4]
        per refresh). In a process group the estimate is then capped by a fresh probe taken
        right after a barrier (the lower envelope of both), and blending with the previous
        model damps single noisy windows.
        """
        world_size = comm.world_size if comm.distributed else 1
        ring = ring_factor(world_size)
        alpha, beta = self.link.alpha_s, self.link.beta_s_per_byte
        fastest: dict[int, float] = {}
        for nbytes, seconds in self.observations:
            if nbytes > 0:
                fastest[nbytes] = min(seconds, fastest.get(nbytes, seconds))
        if len(fastest) >= 2:
            xs = [ring * b for b in fastest]
            ys = list(fastest.values())
            mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
            var_x = statistics.fmean([(x - mean_x) ** 2 for x in xs])
            cov = statistics.fmean(
                [(x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)])
            beta = max(cov / var_x, 1e-13)
            alpha = max(mean_y - beta * mean_x, 1e-7)
        elif fastest:
            (nbytes, seconds), = fastest.items()
            ratio = min(max(seconds / self.link.all_reduce_time(nbytes, world_size), 0.25), 4.0)
            alpha, beta = alpha * ratio, beta * ratio
        self.observations.clear()
        if comm.distributed:
            # Lower envelope with a barrier-aligned probe: rank skew inflates what the
            # hook observes but cannot inflate the probe, and compression cannot fix skew.
            comm.control_barrier()
            probed = probe_link(comm, large=refresh_probe_entries(self.link, world_size),
                                repeats=3)
            alpha, beta = min(alpha, probed.alpha_s), min(beta, probed.beta_s_per_byte)
        alpha, beta = agree_numbers([alpha, beta], comm, dist.ReduceOp.SUM)
        self.link = LinkModel(
            (1 - self.blend) * self.link.alpha_s + self.blend * alpha,
            (1 - self.blend) * self.link.beta_s_per_byte + self.blend * beta,
        )
        self.version += 1

    def state_dict(self) -> dict[str, Any]:
        return {"link": asdict(self.link), "compute": asdict(self.compute),
                "allowed": list(self.allowed), "version": self.version,
                "budgets_s": {str(i): b for i, b in self.budgets_s.items()}}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.link = LinkModel(**state["link"])
        self.compute = ComputeCosts(**state["compute"])
        self.allowed = tuple(state["allowed"])
        self.version = int(state["version"])
        self.budgets_s = {int(i): float(b) for i, b in state.get("budgets_s", {}).items()}
