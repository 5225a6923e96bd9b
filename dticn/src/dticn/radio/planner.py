"""Choose a deployment: search MAC settings for the longest lifetime within a latency bound.

Given a workload (nodes, one item per node every ``interval``, its size), a latency bound
(p95, optionally p50, from an item's creation to the gateway: the push path the paper
recommends), a delivery floor, the battery and the energy profile, :func:`plan` runs every
candidate on its fast engine (DSME: the batched engine, GTS in closed form; LoRaWAN class
A: the event engine, which is fast at these loads), keeps those that meet the bounds and
whose schedule carries the load (:func:`~dticn.radio.capacity.gts_overload`), recommends
the longest-lived one, and returns the Pareto front of lifetime against p95 latency.
:func:`confirm` re-runs a candidate on the event engine.

A measured energy profile prices the MAC it was measured on: with ``dsme-lora`` the class A
candidates are priced by ``casals-class-a`` (a measured class A device) and said so; a MAC
with no measured profile (class B) is then priced on datasheet currents, shown, but neither
recommended nor put on the front (``comparable`` False). With ``optimised`` every
candidate uses it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dticn.energy.profiles import PROFILE_MACS, energy_profile_for_mac
from dticn.radio.capacity import duty_overload, gts_overload
from dticn.radio.context import SlotTooShort, build_context
from dticn.radio.engines import run
from dticn.radio.results import RadioResult
from dticn.radio.scenario import Scenario


@dataclass(frozen=True)
class Workload:
    """What the user asks for."""

    nodes: int
    interval_s: float
    payload_bytes: int = 8
    latency_p95_s: float = math.inf
    latency_p50_s: float = math.inf
    delivery: float = 0.99
    battery_mah: float = 2600.0
    energy_profile: str = "optimised"
    duration_s: float = 86_400.0
    seed: int = 1
    #: Crystal tolerance of node and gateway (ppm). A DSME node opens its receiver
    #: ``beacon_guard_s`` before each expected beacon; two clocks off by 2 x ppm drift
    #: apart by that much in guard / (2 ppm) seconds, so a longer beacon interval loses
    #: sync, which the radio model does not simulate. 20 ppm: a typical 32.768 kHz watch
    #: crystal at 25 C (e.g. Epson FC-135, +-20 ppm). 0: no drift check.
    clock_ppm: float = 20.0

    def __post_init__(self) -> None:
        if self.nodes < 1:
            raise ValueError(f"nodes={self.nodes}: plan for at least one node")
        if self.interval_s <= 0 or self.duration_s <= 0:
            raise ValueError("interval and duration must be positive")
        if not 0.0 <= self.delivery <= 1.0:
            raise ValueError(f"delivery={self.delivery}: give a ratio in 0..1")
        if self.duration_s < 3 * self.interval_s:
            raise ValueError(f"duration {self.duration_s:g} s holds under 3 items per node "
                             f"(one every {self.interval_s:g} s); simulate longer")
        if self.energy_profile not in PROFILE_MACS:
            raise ValueError(f"energy profile {self.energy_profile!r}: use one of "
                             f"{', '.join(PROFILE_MACS)}")

    def profile_for(self, mac: str) -> str:
        """The profile that prices ``mac``: the one asked for, or that MAC's measured one."""
        return energy_profile_for_mac(self.energy_profile, mac)

    def price(self, cand: Candidate) -> None:
        """Set ``cand``'s energy profile (:meth:`profile_for` its MAC) and whether its
        lifetime compares with the workload's (measured against measured, datasheet
        against datasheet)."""
        cand.energy_profile = self.profile_for(cand.changes.get("mac", "dsme"))
        cand.comparable = ((cand.energy_profile == "optimised")
                           == (self.energy_profile == "optimised"))

    def base(self) -> Scenario:
        return Scenario(nodes=self.nodes, duration_s=self.duration_s,
                        traffic=f"periodic:{self.interval_s!r}s",
                        payload_bytes=self.payload_bytes, battery_mah=self.battery_mah,
                        seed=self.seed)


@dataclass
class Candidate:
    """One configuration and what its run gave."""

    label: str
    changes: dict[str, Any]
    energy_profile: str = ""
    lifetime_days: float = math.nan
    latency_p50_s: float = math.nan
    latency_p95_s: float = math.nan
    delivery: float = math.nan
    engine: str = ""
    refused: str | None = None
    misses: list[str] = field(default_factory=list)
    #: Priced by the same kind of energy as the rest (False: datasheet currents among
    #: measured profiles, so it is shown but neither recommended nor on the front).
    comparable: bool = True

    @property
    def feasible(self) -> bool:
        return self.refused is None and not self.misses and self.comparable

    def as_dict(self) -> dict[str, Any]:
        return {"label": self.label, "settings": self.changes,
                "energy_profile": self.energy_profile, "lifetime_days": self.lifetime_days,
                "latency_p50_s": self.latency_p50_s, "latency_p95_s": self.latency_p95_s,
                "delivery_ratio": self.delivery, "engine": self.engine,
                "refused": self.refused, "misses": self.misses,
                "comparable": self.comparable, "feasible": self.feasible}


def candidates(*, dsme_so: Iterable[int] = (3, 4), max_order: int = 12,
               lorawan_sf: Iterable[int] = (7, 8, 9, 10, 11, 12)) -> Iterator[Candidate]:
    """The search space: DSME SO/MO/BO (SF7) and LoRaWAN class A and B SF, (un)confirmed."""
    for so in dsme_so:
        for mo in range(so, max_order + 1):
            for bo in range(mo, min(mo + 4, 14) + 1):
                yield Candidate(f"DSME SO{so} MO{mo} BO{bo}", {"so": so, "mo": mo, "bo": bo})
    for mac, cls in (("lorawan-a", "A"), ("lorawan-b", "B")):
        for sf in lorawan_sf:
            for confirmed in (False, True):
                yield Candidate(f"LoRaWAN {cls} SF{sf} "
                                f"{'confirmed' if confirmed else 'unconfirmed'}",
                                {"mac": mac, "sf": sf, "confirmed": confirmed})


def evaluate(work: Workload, cand: Candidate, *, engine: str = "auto") -> Candidate:
    """Run ``cand`` on ``engine`` and judge it against the workload's bounds."""
    mac = cand.changes.get("mac", "dsme")
    work.price(cand)
    try:
        s = work.base().with_(**cand.changes, energy_profile=cand.energy_profile,
                              engine=engine)
        ctx = None
        if mac == "dsme":
            ctx = build_context(s)
            mac_cfg = ctx.mac
            drift_s = 2 * work.clock_ppm * 1e-6 * mac_cfg.timing.beacon_interval_s
            if drift_s > mac_cfg.beacon_guard_s:
                cand.refused = (f"clocks drift {drift_s * 1e3:.1f} ms per beacon interval at "
                                f"{work.clock_ppm:g} ppm, over the {mac_cfg.beacon_guard_s * 1e3:g}"
                                " ms beacon guard")
                return cand
            overload = gts_overload(s, work.interval_s, mac_cfg.timing.multisuperframe_s)
            if overload is not None:
                cand.refused = f"schedule carries {100 * overload.deliverable:.0f}% of the load"
                return cand
        else:
            duty = duty_overload(s, work.interval_s)
            if duty is not None:
                cand.refused = (f"duty cycle lets out {100 * duty.deliverable:.0f}% of the "
                                "load")
                return cand
        result = run(s, ctx=ctx)
    except SlotTooShort as exc:
        cand.refused = str(exc).split(";")[0]
        return cand
    except ValueError as exc:
        cand.refused = str(exc)
        return cand
    _fill(cand, result)
    judge(work, cand)
    return cand


def judge(work: Workload, cand: Candidate) -> None:
    """Note in ``cand.misses`` every bound of ``work`` its run misses."""
    if cand.delivery < work.delivery:
        cand.misses.append(f"delivery {cand.delivery:.4f} < {work.delivery}")
    if not cand.latency_p95_s <= work.latency_p95_s:
        cand.misses.append(f"p95 {cand.latency_p95_s:.0f} s > {work.latency_p95_s:.0f} s")
    if not cand.latency_p50_s <= work.latency_p50_s:
        cand.misses.append(f"p50 {cand.latency_p50_s:.0f} s > {work.latency_p50_s:.0f} s")


def _fill(cand: Candidate, result: RadioResult) -> None:
    summary = result.summary()
    lat = np.concatenate([n.latencies_s for n in result.nodes])
    cand.lifetime_days = float(summary["lifetime_days_min"])
    cand.delivery = float(summary["delivery_ratio"])
    cand.latency_p50_s = float(np.percentile(lat, 50)) if len(lat) else math.inf
    cand.latency_p95_s = float(np.percentile(lat, 95)) if len(lat) else math.inf
    cand.engine = result.engine


def pareto_front(cands: Iterable[Candidate]) -> list[Candidate]:
    """Runs no other run beats on both lifetime (longer) and p95 latency (shorter), among
    those that meet the delivery floor; by latency."""
    pool = sorted((c for c in cands if c.refused is None and c.comparable
                   and not any(m.startswith("delivery") for m in c.misses)),
                  key=lambda c: (c.latency_p95_s, -c.lifetime_days))
    front: list[Candidate] = []
    best = -math.inf
    for c in pool:
        if c.lifetime_days > best:
            front.append(c)
            best = c.lifetime_days
    return front


@dataclass
class Plan:
    """What :func:`plan` found."""

    workload: Workload
    candidates: list[Candidate]
    recommended: Candidate | None
    front: list[Candidate]

    def bounds(self) -> str:
        """The bounds asked for, in words (an absent latency bound is left out)."""
        w = self.workload
        parts = [f"{name} <= {value:g} s" for name, value in
                 (("p95", w.latency_p95_s), ("p50", w.latency_p50_s)) if math.isfinite(value)]
        return " and ".join([*parts, f"delivery >= {w.delivery}"])

    def why(self) -> str:
        """One paragraph: what was chosen and what it beat."""
        feasible = [c for c in self.candidates if c.feasible]
        if self.recommended is None:
            closest = max((c for c in self.candidates if c.refused is None),
                          key=lambda c: c.lifetime_days, default=None)
            tail = (f"; the longest-lived run, {closest.label}, misses: "
                    f"{', '.join(closest.misses)}" if closest else "")
            return f"no configuration meets {self.bounds()}{tail}"
        r = self.recommended
        others = sorted((c for c in feasible if c is not r), key=lambda c: -c.lifetime_days)
        longer = [c for c in self.candidates if c.refused is None and c.misses
                  and c.comparable and c.lifetime_days > r.lifetime_days]
        text = (f"{r.label} lives longest ({r.lifetime_days:,.0f} days) of the "
                f"{len(feasible)} configurations that meet {self.bounds()}")
        if others:
            text += f"; next: {others[0].label} ({others[0].lifetime_days:,.0f} days)"
        if longer:
            top = max(longer, key=lambda c: c.lifetime_days)
            text += (f"; {top.label} would live longer ({top.lifetime_days:,.0f} days) but "
                     f"misses {', '.join(top.misses)}")
        return text

    def as_dict(self) -> dict[str, Any]:
        return {"workload": vars(self.workload),
                "recommended": self.recommended.as_dict() if self.recommended else None,
                "why": self.why(),
                "pareto_front": [c.label for c in self.front],
                "candidates": [c.as_dict() for c in self.candidates]}


def plan(work: Workload, cands: Iterable[Candidate] | None = None,
         progress: Callable[[Candidate], Any] | None = None) -> Plan:
    """Evaluate every candidate on its fast engine; recommend the longest-lived feasible."""
    return plan_over(work, candidates() if cands is None else cands,
                     lambda cand: evaluate(work, cand), progress)


def plan_over(work: Workload, cands: Iterable[Candidate],
              evaluate_one: Callable[[Candidate], Candidate],
              progress: Callable[[Candidate], Any] | None = None) -> Plan:
    """Evaluate every candidate with ``evaluate_one`` and recommend the longest-lived
    feasible one: the rule every planner shares, whatever runs its candidates."""
    done = []
    for cand in cands:
        done.append(evaluate_one(cand))
        if progress is not None:
            progress(done[-1])
    feasible = [c for c in done if c.feasible]
    best = max(feasible, key=lambda c: c.lifetime_days, default=None)
    return Plan(work, done, best, pareto_front(done))


def confirm(work: Workload, cand: Candidate) -> Candidate:
    """The same configuration on the event-by-event engine."""
    again = Candidate(cand.label, dict(cand.changes))
    return evaluate(work, again, engine="events")
