"""What the adaptive policy prices tiers with: an alpha-beta link and per-element local work.

Why a module of its own: the tiers (:mod:`pactrain.tiers`) state their price in these
terms and the policy (:mod:`pactrain.policy`) measures them; neither should import the other.
"""

from __future__ import annotations

from dataclasses import dataclass


def ring_factor(world_size: int) -> float:
    """2(N-1)/N: bytes a ring all-reduce sends per payload byte (1.0 for a lone rank)."""
    return 2.0 * (world_size - 1) / world_size if world_size > 1 else 1.0


@dataclass
class LinkModel:
    """Latency per collective (s) and seconds per payload byte of one ring all-reduce."""

    alpha_s: float = 1e-4
    beta_s_per_byte: float = 1e-9

    def all_reduce_time(self, nbytes: float, world_size: int) -> float:
        return self.alpha_s + self.beta_s_per_byte * ring_factor(world_size) * nbytes


@dataclass
class ComputeCosts:
    """Seconds per element of the local work each tier adds (measured by
    :func:`pactrain.policy.probe_compute`)."""

    mask_s: float = 1e-10
    gather_s: float = 2e-9
    cast_s: float = 1e-9
    ternary_s: float = 5e-9
    pack_s: float = 4e-9
