"""Fig. 22's CAP gap one setting at a time: each row a :class:`Difference` with an id.

The issue's reading (every node 10 m from the gateway) with one of their settings, their
layout and channel with more of their stored configuration, FLoRa's own PHY pieces, and
their INET radio's CCA on top of three of those. Each row names the file its values come
from; the page and its summary look rows up by ``key`` (``Difference.key``), never by
position or label, and a row that adds a setting to another names it in ``base``.
"""

from __future__ import annotations

from typing import Any

from dticn.experiments.sensitivity import Difference
from dticn.validation.checks import Plan, Progress
from dticn.validation.fig22 import cap_point
from dticn.validation.paper import (
    CAP_SOURCE,
    FLORA_RX,
    FLORA_TOA,
    INET_CAD,
    PAPER,
    SIM_SOURCE,
    THEIR_CHANNEL,
)

RINGS_CHANNEL: dict[str, Any] = {"layout": "rings", **THEIR_CHANNEL}
"""Their layout (rings 10 m apart) with their channel (shadowing per frame only)."""
SINKS_CHANNEL: dict[str, Any] = {"layout": "sinks", **THEIR_CHANNEL}
"""The same with their 15 sinks receiving (peer to peer)."""
FLORA_PHY: dict[str, Any] = {"collision": "flora", "airtime": "flora"}
STORED_CAP: dict[str, Any] = {"cap_plan": "dsme-lora-sim", "cap_ack": False}
"""Their CSMA/CA and CAP timing (plan ``dsme-lora-sim``), frames unconfirmed."""
SIM_FLORA = f"{SIM_SOURCE}; inetrg/flora 3f835bb"
FLORA_BOTH_SOURCE = f"{FLORA_RX}; {FLORA_TOA}"

SENSITIVITY: tuple[Difference, ...] = (
    Difference("disc-20b", "10 m disc, 20 B items (the earlier bench)",
               source="benchmarks/bench_cap_fig22.py", values={"payload_bytes": 20}),
    Difference("disc-opendsme",
               "10 m disc, their CSMA/CA (macMinBE 7, macMaxBE 8, NB 5) and openDSME's CAP "
               "timing (plan dsme-lora-sim)",
               source=f"Section 5.1/5.3; {SIM_SOURCE}, simulations/common.ini; {CAP_SOURCE}",
               values={"cap_plan": "dsme-lora-sim"}),
    Difference("disc-unconfirmed", "10 m disc, unconfirmed CAP frames (their ackReq = false)",
               source=f"{SIM_SOURCE}, simulations/common.ini", values={"cap_ack": False}),
    Difference("disc-cad-miss",
               "10 m disc, CAD misses 20% of busy channels (no source; theirs: CADEff = 1)",
               source="none", values={"cad_miss_prob": 0.2}),
    Difference("rings", "their layout, our per-link shadowing",
               source=f"{SIM_SOURCE}, StaticConcentricMobility", values={"layout": "rings"}),
    Difference("rings-unconfirmed",
               "their layout and channel, unconfirmed (their ackReq = false)",
               source=SIM_FLORA, values={**RINGS_CHANNEL, "cap_ack": False}),
    Difference("rings-opendsme",
               "their layout and channel, their CSMA/CA and CAP timing (dsme-lora-sim)",
               source=f"{SIM_FLORA}; {CAP_SOURCE}",
               values={**RINGS_CHANNEL, "cap_plan": "dsme-lora-sim"}),
    Difference("rings-stored",
               "their stored configuration: layout, channel, CSMA/CA and CAP timing, "
               "unconfirmed",
               source=f"{SIM_FLORA}; {CAP_SOURCE}", values={**RINGS_CHANNEL, **STORED_CAP}),
)
"""One seed per point."""

#: FLoRa's PHY as their Fig. 22 simulation ran it (inetrg/flora 3f835bb with inetrg/dsme_lora
#: e94c7e5): its collision rule (1 dB capture, each interferer alone, the first 2 preamble
#: symbols free: :class:`~dticn.phy.collision.FloraCollision`) and its frame duration (3 to 8
#: symbols over Semtech's: ``rule="flora"`` of :mod:`dticn.phy.airtime`), alone and together,
#: on the disc and in their layout and channel; :data:`FLORA_SEEDS` seeds per point.
FLORA_SEEDS = 3
FLORA_SENSITIVITY: tuple[Difference, ...] = (
    Difference("disc-flora-rule", "10 m disc, FLoRa's collision rule", source=FLORA_RX,
               values={"collision": "flora"}),
    Difference("disc-flora-toa", "10 m disc, FLoRa's frame duration", source=FLORA_TOA,
               values={"airtime": "flora"}),
    Difference("disc-flora-both", "10 m disc, FLoRa's collision rule and frame duration",
               source=FLORA_BOTH_SOURCE, values=FLORA_PHY),
    Difference("rings-flora-rule", "their layout and channel, FLoRa's collision rule",
               source=FLORA_RX, values={**RINGS_CHANNEL, "collision": "flora"}),
    Difference("rings-flora-toa", "their layout and channel, FLoRa's frame duration",
               source=FLORA_TOA, values={**RINGS_CHANNEL, "airtime": "flora"}),
    Difference("rings-flora-both",
               "their layout and channel, FLoRa's collision rule and frame duration",
               source=FLORA_BOTH_SOURCE, values={**RINGS_CHANNEL, **FLORA_PHY}),
    Difference("sinks", "their layout and channel, their 15 sinks (peer to peer)",
               source=f"{SIM_SOURCE}, s_100_a_15_aps_1.ini / s_300_a_15_aps_1.ini",
               values=SINKS_CHANNEL),
    Difference("sinks-flora-both",
               "their layout and channel, their 15 sinks, FLoRa's collision rule and "
               "frame duration",
               source=f"{SIM_SOURCE}; {FLORA_BOTH_SOURCE}",
               values={**SINKS_CHANNEL, **FLORA_PHY}),
    Difference("sinks-stored-flora",
               "their stored configuration (layout, channel, 15 sinks, CSMA/CA and CAP "
               "timing, unconfirmed) with FLoRa's collision rule and frame duration",
               source=f"{SIM_SOURCE}; {FLORA_BOTH_SOURCE}; {CAP_SOURCE}",
               values={**SINKS_CHANNEL, **STORED_CAP, **FLORA_PHY}),
    Difference("rings-stored-flora",
               "their stored configuration (layout, channel, CSMA/CA and CAP timing, "
               "unconfirmed) with FLoRa's collision rule and frame duration",
               source=f"{SIM_SOURCE}; {FLORA_BOTH_SOURCE}; {CAP_SOURCE}",
               values={**RINGS_CHANNEL, **STORED_CAP, **FLORA_PHY}),
)

#: The dsme-lora-sim readings again with their INET radio's CCA (``cad_rule="inet"``: a
#: frame begun while the node was not listening stays unseen; :data:`~.paper.INET_CAD`),
#: :data:`INET_CAD_SEEDS` seeds per point.
INET_CAD_SEEDS = 3
INET_CAD_TITLE = ", CAD as their INET radio"
_BY_KEY = {d.key: d for d in SENSITIVITY + FLORA_SENSITIVITY}
INET_CAD_SENSITIVITY: tuple[Difference, ...] = tuple(
    _BY_KEY[key].plus("inet-cad", INET_CAD_TITLE, INET_CAD, cad_rule="inet")
    for key in ("disc-opendsme", "rings-stored", "sinks-stored-flora"))

TABLES: tuple[tuple[tuple[Difference, ...], int], ...] = (
    (SENSITIVITY, 1), (FLORA_SENSITIVITY, FLORA_SEEDS), (INET_CAD_SENSITIVITY, INET_CAD_SEEDS))
"""Every row with its seeds per point, in the page's order."""
BY_KEY: dict[str, Difference] = {d.key: d for table, _ in TABLES for d in table}
BY_TITLE: dict[str, Difference] = {d.title: d for d in BY_KEY.values()}


def row_count() -> int:
    """How many rows the sensitivity table has."""
    return len(BY_KEY)


def sensitivity_row(plan: Plan, progress: Progress, diff: Difference, seeds: int
                    ) -> dict[str, Any]:
    """CAP delivery (and delay) at each Fig. 22 point with ``diff``'s settings."""
    row: dict[str, Any] = {"id": diff.key, "setting": diff.title, "source": diff.source,
                           "seeds": seeds, "points": {}}
    if diff.base:
        row["base"] = diff.base
    for (nodes, interval), theirs in PAPER["fig22_cap_delivery"].items():
        progress(f"Fig. 22 sensitivity: {diff.title}: {nodes} nodes, 1/{interval} s")
        p = cap_point(nodes, interval, seeds, plan.sensitivity_horizon_s, **diff.values)
        row["points"][f"{nodes}/{interval}"] = {
            "delivery": p["delivery"], "theirs": theirs, "p50_s": p["p50_s"],
            "under_10s": p["under_10s"], "queue_drops": p["queue_drops"]}
    deltas = [abs(v["delivery"] - v["theirs"]) for v in row["points"].values()]
    row["max_gap_points"] = 100 * max(deltas)
    return row


def fig22_sensitivity(plan: Plan, progress: Progress) -> list[dict[str, Any]]:
    """The whole table, every row of :data:`TABLES` with its seeds."""
    return [sensitivity_row(plan, progress, diff, seeds)
            for table, seeds in TABLES for diff in table]


def missing_rows(plan: Plan, progress: Progress, have: list[dict[str, Any]]
                 ) -> list[dict[str, Any]]:
    """The table with the rows ``have`` holds kept and the others run."""
    kept = {row_key(r): r for r in have}
    return [kept.get(diff.key) or sensitivity_row(plan, progress, diff, seeds)
            for table, seeds in TABLES for diff in table]


def row_key(row: dict[str, Any]) -> str:
    """A stored row's id (a report written before rows had ids: by its whole title)."""
    if "id" in row:
        return str(row["id"])
    known = BY_TITLE.get(row["setting"])
    return known.key if known is not None else row["setting"]


def rows_by_key(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The report's sensitivity rows by id."""
    return {row_key(r): r for r in doc.get("fig22_sensitivity", [])}
