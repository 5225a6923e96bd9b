"""The comparison table as text rows (shared by ``reproduce``, ``sweep`` and the docs)."""

from __future__ import annotations

import math
from typing import Any

COLUMNS = (
    ("config", "config", None),
    ("success_ratio", "success", 3),
    ("latency_p50_s", "p50 s", 1),
    ("latency_p95_s", "p95 s", 1),
    ("internet_packets_per_item", "Inet pkt/item", 1),
    ("lora_frames_per_item", "LoRa frm/item", 2),
    ("lora_airtime_s_per_item", "airtime s/item", 3),
    ("node_energy_j_per_day", "J/day", 1),
    ("lifetime_days", "life d", 0),
    ("lifetime_days_cap_rx_on", "life d, CAP RX on", 0),
)


def fmt(row: dict[str, Any], key: str, digits: int | None, *, ci: bool = True) -> str:
    """``mean ± ci`` (``ci`` False: the mean alone) with ``digits`` decimals ("-" for
    NaN)."""
    value = row.get(key)
    if digits is None:
        return str(value)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    half = row.get(f"{key}_ci95") if ci else None
    text = f"{value:.{digits}f}"
    if half is not None and not math.isnan(half) and half > 0:
        text += f" ± {half:.{digits}f}"
    return text


def text_rows(rows: list[dict[str, Any]]) -> list[list[str]]:
    """One list of cell strings per row, in :data:`COLUMNS` order."""
    return [[fmt(r, key, digits) for key, _, digits in COLUMNS] for r in rows]


def markdown(rows: list[dict[str, Any]]) -> str:
    """A GitHub-flavoured Markdown table."""
    head = "| " + " | ".join(title for _, title, _ in COLUMNS) + " |"
    sep = "|" + "|".join("---" for _ in COLUMNS) + "|"
    body = ["| " + " | ".join(cells) + " |" for cells in text_rows(rows)]
    return "\n".join([head, sep, *body])


SIDE_BY_SIDE = (
    ("success_ratio", "success", 3),
    ("latency_p50_s", "p50 s", 1),
    ("latency_p95_s", "p95 s", 1),
    ("lora_frames_per_item", "LoRa frm/item", 2),
    ("internet_packets_per_item", "Inet pkt/item", 1),
    ("lifetime_days", "life d", 0),
)
"""What ``reproduce --mac A --mac B`` puts next to each other per configuration."""


def side_by_side(rows_by_mac: dict[str, list[dict[str, Any]]]
                 ) -> tuple[list[str], list[list[str]]]:
    """Header and rows: each configuration once, each :data:`SIDE_BY_SIDE` metric once
    per MAC (same configurations in the same order under every MAC); means only (the
    per-MAC tables carry the confidence intervals)."""
    macs = list(rows_by_mac)
    head = ["config"] + [f"{title} {mac}" for _, title, _ in SIDE_BY_SIDE for mac in macs]
    body = []
    for k, first in enumerate(rows_by_mac[macs[0]]):
        cells = [str(first["config"])]
        for key, _, digits in SIDE_BY_SIDE:
            cells += [fmt(rows_by_mac[mac][k], key, digits, ci=False) for mac in macs]
        body.append(cells)
    return head, body
