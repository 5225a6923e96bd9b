"""The compaction hook's options and their checks (the CLI calls the checks too, before
any worker starts, so a bad value is refused in the launcher and not in every worker)."""

from __future__ import annotations

import logging

from pactrain.policy import AdaptivePolicy, FixedPolicy
from pactrain.tiers import TIER_NAMES, check_serves
from pactrain.tiers.base import Tier

LOG = logging.getLogger("pactrain.compaction")

#: How ``send_density`` picks the kept entries that travel: ``topk`` (agreed top chunks,
#: :meth:`pactrain.compaction.sampling.Sampler.top_chunks`), ``topk-ahead`` (the same pick
#: from chunk maxima agreed one step ahead, :func:`pactrain.compaction.send.send_ahead`)
#: or ``cyclic`` (:meth:`pactrain.compaction.sampling.Sampler.cyclic_sample`).
SEND_SELECTIONS: tuple[str, ...] = ("topk", "topk-ahead", "cyclic")

#: The selections that pick the top chunks.
TOP_CHUNK_SELECTIONS: tuple[str, ...] = ("topk", "topk-ahead")

#: How the ternary tiers round ``v / scale`` to a code: ``stochastic`` (sign(v) with
#: probability |v|/scale: unbiased, TernGrad's and QSGD's rule) or ``nearest`` (sign(v)
#: where |v| > scale/2: biased but contractive, so with error feedback what it rounds
#: away is sent later, as in EF-SGD, Karimireddy et al., ICML 2019).
ROUNDINGS: tuple[str, ...] = ("stochastic", "nearest")


def check_send_density(send_density: float | None) -> None:
    """Refuse a ``send_density`` outside (0, 1] (the CLI calls it too, before any worker
    starts).

    Raises:
        ValueError: naming the bad value.
    """
    if send_density is not None and not 0.0 < send_density <= 1.0:
        raise ValueError(f"send_density must be in (0, 1], got {send_density}")


def check_rounding(rounding: str, error_feedback: bool | None = None) -> None:
    """Refuse an unknown ternary ``rounding``, and ``nearest`` with error feedback
    explicitly off (``False``; ``None`` is the default, which turns it on). The CLI calls
    it too, before any worker starts."""
    if rounding not in ROUNDINGS:
        raise ValueError(f"rounding must be one of {', '.join(ROUNDINGS)}, got {rounding!r}")
    if rounding == "nearest" and error_feedback is False:
        raise ValueError("nearest rounding keeps what it rounds away in the error-feedback "
                         "residual; drop --no-error-feedback (error_feedback=False)")


def check_send_select(send_select: str, error_feedback: bool | None = None) -> None:
    """Refuse an unknown ``send_select``, and ``topk-ahead`` with error feedback
    explicitly off (the CLI calls it too).

    Raises:
        ValueError: naming the bad value and the choices, or the flag to drop.
    """
    if send_select not in SEND_SELECTIONS:
        raise ValueError(f"send_select must be one of {', '.join(SEND_SELECTIONS)}, "
                         f"got {send_select!r}")
    if send_select == "topk-ahead" and error_feedback is False:
        raise ValueError("topk-ahead codes with the scales agreed a step earlier and keeps "
                         "what they clip in the error-feedback residual; drop "
                         "--no-error-feedback (error_feedback=False)")


def check_policy(tiers: dict[str, Tier], policy: FixedPolicy | AdaptivePolicy,
                 world_size: int) -> None:
    """Refuse a forced tier that is unknown or does not serve ``world_size`` workers; drop
    such tiers from an adaptive policy's choices (with a warning)."""
    if isinstance(policy, FixedPolicy):
        if policy.tier not in tiers:
            raise ValueError(f"unknown tier {policy.tier!r}; choose one of {TIER_NAMES}")
        check_serves([policy.tier], world_size, f"pactrain-{policy.tier}")
    if isinstance(policy, AdaptivePolicy):
        refused = [t for t in policy.allowed if not tiers[t].serves(world_size)]
        if refused:
            LOG.warning("world size %d: the adaptive policy will not use %s (it serves "
                        "fewer workers)", world_size, ", ".join(refused))
            policy.allowed = tuple(t for t in policy.allowed if t not in refused)
