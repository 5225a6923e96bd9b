"""Link rates as ``tc`` writes them (``10mbit``, ``1gbit``), and the token bucket for one.

Pure arithmetic, used by the bench (its grid of bandwidths), the plots (their labels) and
the namespace builder (:mod:`pactrain.bench.netns`, which shapes links with ``tc tbf``).
"""

from __future__ import annotations

import re

_RATE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(bit|kbit|mbit|gbit|tbit)?\s*$", re.IGNORECASE)
_RATE_UNITS = {"bit": 1, "kbit": 10**3, "mbit": 10**6, "gbit": 10**9, "tbit": 10**12}


def parse_rate(rate: str) -> int:
    """Parse a tc-style rate (``10mbit``, ``1gbit``, ``500kbit``) into bits per second.

    Bare numbers are bits per second. Raises ``ValueError`` naming the accepted forms.
    """
    match = _RATE_RE.match(rate)
    if not match:
        raise ValueError(
            f"cannot read bandwidth {rate!r}; write it like 10mbit, 100mbit, 1gbit or 500kbit"
        )
    value = float(match.group(1)) * _RATE_UNITS[(match.group(2) or "bit").lower()]
    if value < 8_000:
        raise ValueError(f"bandwidth {rate!r} is below 8kbit; tbf cannot shape that usefully")
    return int(value)


def format_rate(bits_per_s: int) -> str:
    """Short human form of a rate, e.g. ``100mbit`` (as the bench prints and stores it)."""
    for unit, scale in (("gbit", 10**9), ("mbit", 10**6), ("kbit", 10**3)):
        if bits_per_s >= scale and bits_per_s % scale == 0:
            return f"{bits_per_s // scale}{unit}"
    return f"{bits_per_s}bit"


def tbf_burst_bytes(bits_per_s: int) -> int:
    """Token-bucket depth for ``bits_per_s``: about 2.5 ms of traffic, at least 32 KiB.

    A bucket smaller than what the rate delivers between timer ticks makes tbf cap below
    the configured rate; 2.5 ms gives ~312 KB at 1 Gbit/s (>= the 256 KB that rate needs)
    and stays short enough not to hide the limit at 10 Mbit/s.
    """
    return max(32 * 1024, bits_per_s // 8 * 25 // 10_000)
