"""PacTrain's tiers: how one bucket's kept entries travel (one module per tier).

:data:`TIER_NAMES` is the registry: one line per tier, most bytes per kept entry first.
Each name is the module ``pactrain.tiers.<name>``, which defines ``TIER``, a
:class:`pactrain.tiers.base.Tier` declaring its name, whether it is lossy, its precision
level, its bytes for (n kept entries, N workers), its price on a link model and its send.
The policy (:mod:`pactrain.policy`), the method registry and CLI names
(:mod:`pactrain.methods.pactrain`, :mod:`pactrain.names`), the plan checker and the docs
table (generated, :mod:`pactrain.tiers.table`) all read this list, so adding a tier is its
module plus one line here (then ``python -m pactrain.tiers.table --write
docs/pactrain-core.md`` regenerates the table; ``tests/test_tiers.py`` checks it).

This module imports nothing heavy: :mod:`pactrain.names` reads :data:`TIER_NAMES` to list
the methods for ``--help`` without importing torch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pactrain.tiers.base import Tier

#: The registry of tiers (the module name of each), most bytes per kept entry first.
TIER_NAMES: tuple[str, ...] = (
    "dense",
    "fp32",
    "fp16",
    "bf16",
    "ternary",
    "nonary",
    "quinary",
    "packed",
)

#: The tier a bucket falls back to: the whole bucket, no compaction. It has no method of
#: its own (``pactrain-<tier>`` exists for every other tier).
FALLBACK_TIER = "dense"


def method_name(tier: str) -> str:
    """The registry name of the method that forces ``tier`` (``pactrain-fp16``)."""
    return f"pactrain-{tier}"


def forced_method_names() -> tuple[str, ...]:
    """``pactrain-<tier>`` for every tier but the fallback."""
    return tuple(method_name(t) for t in TIER_NAMES if t != FALLBACK_TIER)


def get_tier(name: str) -> Tier:
    """The tier registered as ``name``.

    Raises:
        ValueError: an unknown name (the message lists the tiers).
    """
    if name not in TIER_NAMES:
        raise ValueError(f"unknown tier {name!r}; choose one of {', '.join(TIER_NAMES)}")
    return importlib.import_module(f"{__name__}.{name}").TIER


def check_serves(names: tuple[str, ...] | list[str] | set[str], world_size: int,
                 what: str, error: type[ValueError] = ValueError) -> None:
    """The one check of the tiers' worker limits (a forced tier, a replayed plan): refuse
    ``world_size`` beyond what a tier named in ``names`` serves.

    Raises:
        ``error``: naming the tier, its limit and why, and what to use instead.
    """
    for name in sorted(names):
        tier = get_tier(name)
        if not tier.serves(world_size):
            raise error(f"{what} uses the {name} tier, which serves at most "
                        f"{tier.max_world_size} workers ({tier.limit_reason}); this group "
                        f"has {world_size}: use pactrain-packed, pactrain-fp16 or the "
                        "adaptive pactrain method")


def all_tiers() -> dict[str, Tier]:
    """Every registered tier by name, in registry order."""
    return {name: get_tier(name) for name in TIER_NAMES}
