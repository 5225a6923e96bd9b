"""Retrieval schemes and the compared configurations, found by name (a registry).

Each scheme module (:mod:`~dticn.schemes.polling`, :mod:`~dticn.schemes.rice`,
:mod:`~dticn.schemes.push`) declares its configurations as data in ``CONFIGS``.
"""

from __future__ import annotations

from dticn.schemes import polling, push, rice
from dticn.schemes.base import SchemeConfig

PAPER_CONFIGS = ("v1-inr", "v1-cr", "v2-inr", "v2-cr", "v3-inr", "v3-cr", "rice", "push")
ALL_CONFIGS = (*PAPER_CONFIGS[:7], "rice-schedule", "push", "push-draft")


def registry() -> dict[str, SchemeConfig]:
    """A fresh name -> configuration mapping (callers may extend their copy)."""
    out: dict[str, SchemeConfig] = {}
    for module in (polling, rice, push):
        for cfg in module.CONFIGS:
            out[cfg.name] = cfg
    return out


def get(name: str) -> SchemeConfig:
    """The configuration called ``name``; the error lists the known ones."""
    known = registry()
    try:
        return known[name]
    except KeyError:
        raise KeyError(f"unknown configuration {name!r}; known: {', '.join(known)}") from None


__all__ = ["ALL_CONFIGS", "PAPER_CONFIGS", "SchemeConfig", "get", "registry"]
