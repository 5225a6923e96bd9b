"""`dticn plan --scheme <pull configuration>`: choose a deployment for the Interest paths.

The radio planner (:mod:`dticn.radio.planner`) prices the push path, where only uplinks
count. A consumer that asks for data (polling, RICE) needs the node reachable, and what
reachability costs is the MAC's own knob: DSME's multisuperframe order (one downlink GTS
per multisuperframe), LoRaWAN class A's keep-alive period (the node opens its windows only
after its own uplinks), class B's ping period. Each candidate runs the whole NDN edge
(:class:`~dticn.experiments.world.World`: consumer, forwarders, gateway scheme, nodes) on
the event engine for a search window, with one transaction per node every ``interval``;
latency is the consumer's time to content, delivery its success ratio, lifetime the
shortest node lifetime. The recommendation is then re-run over the workload's full
duration (:func:`confirm_edge`) and both figures are printed side by side.

The judgement (bounds, Pareto front, recommendation, its reason) is the radio planner's
(:class:`~dticn.radio.planner.Plan`), so both paths read the same way.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from dticn.edge_profiles import get_profile
from dticn.lora_edge import LORAWAN_REPORT_S
from dticn.radio.planner import Candidate, Plan, Workload, judge, plan_over

SEARCH_S = 6 * 3600.0
"""Simulated window per candidate while searching (the confirmation runs the full one)."""
DSME_ORDERS = (5, 6, 7, 8)
"""Multisuperframe orders searched (BO = MO): 30.72 s to 245.76 s between GTS."""
REACH_DOUBLINGS = 4
"""LoRaWAN reachability periods searched: 30.72 s x 2^k, k < this (to 245.76 s, DSME's
MO 8); class B stops at its longest ping period, 2^7 x 0.96 = 122.88 s."""
LONGEST_PING_S = 122.88


@dataclass(frozen=True)
class EdgeWorkload:
    """A :class:`~dticn.radio.planner.Workload` and the configuration that pulls."""

    work: Workload
    scheme: str
    search_s: float = SEARCH_S

    def __post_init__(self) -> None:
        from dticn.schemes import get

        config = get(self.scheme)         # KeyError names the known ones
        if config.pushes:
            raise ValueError(f"{self.scheme} pushes; the push path is the radio planner's "
                             "(dticn plan without --scheme)")
        if self.search_s < 3 * self.work.interval_s:
            raise ValueError(f"search window {self.search_s:g} s holds under 3 items per "
                             f"node (one every {self.work.interval_s:g} s)")


def edge_candidates(sfs: Iterable[int] = (7, 8, 9)) -> Iterator[Candidate]:
    """DSME MO 5..8; LoRaWAN class A keep-alive periods and class B ping periods of
    30.72 s x 2^k, at each SF."""
    for mo in DSME_ORDERS:
        yield Candidate(f"DSME MO{mo} BO{mo}", {"mac": "dsme", "mo": mo})
    for sf in sfs:
        for k in range(REACH_DOUBLINGS):
            period = LORAWAN_REPORT_S * 2 ** k
            yield Candidate(f"LoRaWAN A SF{sf} keep-alive {period:g} s",
                            {"mac": "lorawan-a", "sf": sf, "reach_s": period})
            if period <= LONGEST_PING_S:
                yield Candidate(f"LoRaWAN B SF{sf} ping {period:g} s",
                                {"mac": "lorawan-b", "sf": sf, "reach_s": period})


def evaluate_edge(edge: EdgeWorkload, cand: Candidate, *, duration_s: float | None = None
                  ) -> Candidate:
    """Run ``cand``'s edge for ``duration_s`` (the search window by default) and judge it."""
    from dticn.experiments.metrics import run_metrics
    from dticn.experiments.params import Experiment
    from dticn.experiments.world import World, schedule_overload

    work = edge.work
    work.price(cand)
    profile = get_profile("model").with_(item_payload_bytes=work.payload_bytes)
    try:
        exp = Experiment(config=edge.scheme, seed=work.seed, nodes=work.nodes,
                         duration_s=edge.search_s if duration_s is None else duration_s,
                         interval_s=(work.interval_s, work.interval_s), pattern="periodic",
                         battery_mah=work.battery_mah, energy_profile=cand.energy_profile,
                         profile=profile, **cand.changes)
        overload = schedule_overload(exp)
        if overload is not None:     # the planner never recommends one (issue 23, item 5)
            cand.refused = (f"carries {100 * overload.deliverable:.0f}% of its "
                            f"{overload.frames}")
            return cand
        world = World(exp)
        world.run()
        m = run_metrics(world)
    except ValueError as exc:
        cand.refused = str(exc).split(";")[0]
        return cand
    cand.lifetime_days = float(m["lifetime_days"])
    cand.delivery = float(m["success_ratio"])
    cand.latency_p50_s = _finite_or_inf(m["latency_p50_s"])
    cand.latency_p95_s = _finite_or_inf(m["latency_p95_s"])
    cand.engine = f"events, {exp.duration_s / 3600:g} h"
    judge(work, cand)
    return cand


def _finite_or_inf(value: float) -> float:
    return value if math.isfinite(value) else math.inf


def plan_edge(edge: EdgeWorkload, cands: Iterable[Candidate] | None = None,
              progress: Callable[[Candidate], Any] | None = None) -> Plan:
    """Evaluate every candidate over the search window; recommend the longest-lived
    feasible one (the radio planner's rule)."""
    return plan_over(edge.work, edge_candidates() if cands is None else cands,
                     lambda cand: evaluate_edge(edge, cand), progress)


def confirm_edge(edge: EdgeWorkload, cand: Candidate) -> Candidate:
    """The same configuration over the workload's full duration."""
    return evaluate_edge(edge, Candidate(cand.label, dict(cand.changes)),
                         duration_s=edge.work.duration_s)
