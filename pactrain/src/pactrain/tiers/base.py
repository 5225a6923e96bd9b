"""What a tier is: its declaration (name, lossiness, precision, bytes, price) and its send.

A compacting tier (every tier but ``dense``) receives the entries of one bucket that
travel this step, fp32, error feedback already added (``values``), and returns a
:class:`Sent`: a future of the group's average of those entries, and the local error
(what this rank meant minus what its contribution delivers) for the residual memory, or
``None`` when it delivers exactly. The hook (:mod:`pactrain.compaction`) gathers the
entries, keeps the residuals, samples (``send_density``) and scatters the average back;
a tier only encodes, talks through the communicator and decodes.

``dense`` is the fallback: it sends the whole bucket (:meth:`Tier.send_bucket`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from pactrain.compression.communicator import Communicator
from pactrain.compression.compressors import Bounds
from pactrain.costs import ComputeCosts, LinkModel, ring_factor

#: Precision levels, most precise first: the policy prefers a lower level when its price
#: hides under the backward pass (:meth:`pactrain.policy.AdaptivePolicy.decide`). CODES:
#: stochastic codes of more than three levels (``quinary``).
EXACT, HALF, CODES, TERNARY = 0, 1, 2, 3


@dataclass(frozen=True)
class TierContext:
    """What one bucket's send needs besides its values.

    Attributes:
        comm: the communicator every collective goes through.
        world_size: ranks in the group.
        scale_group: the group of the ternary scales (``None``: the communicator's).
        bounds: (start, end) of each parameter's entries in ``values``.
        draws: U[0, 1) per entry of ``values``, seeded per parameter
            (:meth:`pactrain.compaction.draws.Draws.uniform`); only the
            stochastic tiers call it.
        wants_error: whether the error is kept (error feedback on); when not, a lossy
            tier may return ``error=None`` and skip the passes that form it.
        scales: the group's MAX of |v| per chunk of the values, agreed by the hook
            before it calls the send (for every tier that :attr:`Tier.agrees_scales`, and
            for the top-chunk sample); ``None`` only outside the hook, where the ternary
            tiers then agree on them themselves and wait.
    """

    comm: Communicator
    world_size: int
    scale_group: Any
    bounds: Bounds
    draws: Callable[[], torch.Tensor]
    wants_error: bool = True
    scales: torch.Tensor | None = None


@dataclass(frozen=True)
class Sent:
    """A tier's send in flight: ``future`` gives the group's average of the entries
    sent (any float dtype); ``error`` is this rank's ``meant - delivered`` for them
    (``None``: delivered exactly)."""

    future: torch.futures.Future
    error: torch.Tensor | None


def no_extra_bytes(sent: int) -> float:
    """No payload beyond the entries themselves."""
    return 0.0


@dataclass(frozen=True)
class Tier:
    """One tier's declaration and send.

    Attributes:
        name: the registry name (``pactrain.tiers.<name>``).
        description: one line for ``--help``, reports and the docs table.
        lossy: whether the average it delivers differs from the exact one.
        precision: :data:`EXACT`, :data:`HALF`, :data:`CODES` or :data:`TERNARY`.
        collectives: collectives per bucket (each pays the link's latency alpha).
        bytes_per_entry: payload bytes per entry sent at a world size (before the ring
            factor 2(N-1)/N).
        extra_bytes: further payload bytes per bucket for ``n`` entries sent (the ternary
            scales: 4 B per chunk).
        local_cost: seconds of local work for (costs, entries in the bucket, entries sent).
        send: the compacting send (``None`` for the fallback, which has ``send_bucket``).
        send_bucket: the fallback's send of the whole bucket ``(ctx, buffer, flat_mask)``.
        max_world_size: the most ranks it serves (``None``: no limit).
        limit_reason: why (for the error message).
        adaptive_default: whether the adaptive policy may pick it unless told otherwise.
        agrees_scales: whether its codes need the group's MAX scale per chunk first
            (:func:`pactrain.tiers.ternary.agreed_scales`); the hook then starts that
            agreement itself and hands the scales over in :attr:`TierContext.scales`, so
            the send never waits (:class:`pactrain.compression.communicator.OrderedLauncher`).
    """

    name: str
    description: str
    lossy: bool
    precision: int
    bytes_per_entry: Callable[[int], float]
    local_cost: Callable[[ComputeCosts, int, int], float]
    send: Callable[[TierContext, torch.Tensor], Sent] | None = None
    send_bucket: Callable[[TierContext, torch.Tensor, torch.Tensor],
                          torch.futures.Future] | None = None
    collectives: int = 1
    extra_bytes: Callable[[int], float] = no_extra_bytes
    max_world_size: int | None = None
    limit_reason: str = ""
    adaptive_default: bool = True
    agrees_scales: bool = False

    @property
    def compacts(self) -> bool:
        """Whether it sends only the kept entries (every tier but the fallback)."""
        return self.send is not None

    def payload_bytes(self, numel: int, sent: int, world_size: int) -> float:
        """Bytes handed to its collectives for one bucket (per rank, before the ring)."""
        entries = sent if self.compacts else numel
        return self.bytes_per_entry(world_size) * entries + self.extra_bytes(sent)

    def link_time(self, link: LinkModel, numel: int, sent: int, world_size: int) -> float:
        """Seconds on the link for one bucket: ``collectives`` x alpha plus beta x ring x
        bytes."""
        return (self.collectives * link.alpha_s
                + link.beta_s_per_byte * ring_factor(world_size)
                * self.payload_bytes(numel, sent, world_size))

    def price(self, link: LinkModel, compute: ComputeCosts, numel: int, sent: int,
              world_size: int) -> float:
        """Predicted seconds for one bucket: its link time plus the local work."""
        return (self.link_time(link, numel, sent, world_size)
                + self.local_cost(compute, numel, sent))

    def serves(self, world_size: int) -> bool:
        return self.max_world_size is None or world_size <= self.max_world_size
