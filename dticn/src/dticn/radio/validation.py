"""Our radio model beside DSME-LoRa's published numbers (issue 16, item 3).

DSME-LoRa: J. Alamos, P. Kietzmann, T. C. Schmidt, M. Wählisch, "DSME-LoRa: Seamless Long
Range Communication Between Arbitrary Nodes in the Constrained IoT", ACM TOSN 2022,
arXiv 2206.14077. Every check names its table or figure; their values are in
:data:`PAPER` as printed ("~": read off a plot). Each section runs our simulator (and, for
the GTS queue, our reimplementation of their Markov model, :mod:`dticn.radio.gts_queue`)
on their scenario and reports ours, theirs, the difference, the tolerance and the cause.

Tolerances: the issue's (Table 5 and Table 8 power/lifetime within 15%; Fig. 22 CAP
delivery within 10 points and CAP median delay under 10 s; GTS unchanged, read as
delivery within 10 points); where the issue sets none (Table 7, Table 8 delay, Fig. 23)
we use 15% and say so (``tolerance_source``).

The computation is here; ``dticn validate`` drives it, shows progress and writes the JSON,
the Markdown page and the figures (:mod:`dticn.radio.validation_plots`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from dticn.phy.airtime import LoRaParams, time_on_air
from dticn.radio import gts_queue
from dticn.radio.batch import run, run_batch
from dticn.radio.context import build_context, with_flora_phy
from dticn.radio.network import RadioNetwork
from dticn.radio.opendsme_cap import COMPARISON
from dticn.radio.results import RadioResult
from dticn.radio.scenario import Scenario
from dticn.radio.topology import Topology, concentric_positions

SOURCE = ("DSME-LoRa (Alamos, Kietzmann, Schmidt, Wählisch, ACM TOSN 2022, "
          "arXiv 2206.14077)")
SIM_SOURCE = "inetrg/dsme_lora e94c7e5 (their OMNeT++/FLoRa simulation)"
#: openDSME as their simulation pinned it: the CAP timing of the ``dsme-lora-sim`` plan.
CAP_SOURCE = ("inetrg/openDSME de04814, dsmeLayer/capLayer/CAPLayer.cc, "
              "mac_services/pib/{dsme_phy_constants.h,PIBHelper.cc}")

#: Their values, as printed (Tables) or read off a plot (Fig. 22, "~").
PAPER: dict[str, Any] = {
    # Table 5: mJ per 15.36 s beacon interval (SO 3, MO 3, BO 4), totals; and the active
    # parts, from which the frames per interval follow (active mJ / per-frame mJ).
    "table5": {"S1": 323.09, "S2": 40.66, "S3": 63.89},
    "table5_active": {"S1": 11.12, "S2": 16.91, "S3": 5.92},
    "table5_frame_mj": {"S1": 12.04, "S2": 11.27, "S3": 6.44},
    # Table 7: maximum GTS load, packets/h, model / simulation, by MO.
    "table7": {3: (401.24, 401.25), 4: (200.58, 200.62), 5: (100.29, 100.31),
               6: (50.15, 50.16)},
    # Table 8: GTS sender, BO 7, one frame per 15 min: delay s, power mW, lifetime years.
    "table8": {3: (3.87, 0.58, 1.82), 4: (7.81, 0.47, 2.24), 5: (15.9, 0.42, 2.53),
               6: (32.97, 0.39, 2.71), 7: (71.16, 0.38, 2.81)},
    # Fig. 22 (MO 5, confirmed): CAP delivery; GTS delivery and maximum delay.
    "fig22_cap_delivery": {(100, 80): 0.95, (100, 40): 0.60, (300, 80): 0.38,
                           (300, 40): 0.14},
    "fig22_gts_delivery": 1.0,
    "fig22_gts_max_delay_s": {80: 120.0, 40: 500.0},
    # Fig. 23b: GTS mean delay s, by (interval s, MO); MO 6 at 40 s is outside the model.
    "fig23": {(40, 3): 4.75, (40, 4): 12.47, (40, 5): 66.21,
              (80, 3): 4.25, (80, 4): 9.5, (80, 5): 24.94, (80, 6): 132.41,
              (160, 3): 4.03, (160, 4): 8.5, (160, 5): 19.01, (160, 6): 49.87,
              (320, 3): 3.93, (320, 4): 8.07, (320, 5): 16.99, (320, 6): 38.02},
}

BEACON_INTERVAL_S = 15.36        # Table 5: SO 3, BO 4
TABLE8_INTERVAL_S = 900.0        # Table 8: one frame per 15 min
TABLE8_BATTERY_MAH = 2800.0
#: Their simulation's payload (``packetLength = 16B``, simulations/common.ini) and layout:
#: hosts on concentric rings 10 m apart (INET StaticConcentricMobility), so 115 hosts
#: reach 60 m and 315 hosts 100 m from the centre.
FIG22_PAYLOAD = 16
FIG22_RING_RADIUS_M = {100: 60.0, 300: 100.0}
YEAR_DAYS = 365.25


@dataclass
class Check:
    """One number of theirs beside ours."""

    section: str
    item: str
    unit: str
    theirs: float | None
    ours: float
    source: str
    tolerance: str                      # "15%", "10 points", "< 10 s", "-" (none)
    tolerance_source: str = "issue 16"
    passed: bool | None = None          # None: no tolerance (shown for information)
    diff: str = ""
    method: str = ""
    cause: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _relative(check: Check, rel: float) -> Check:
    assert check.theirs is not None
    d = (check.ours - check.theirs) / check.theirs
    check.diff = f"{100 * d:+.1f}%"
    check.passed = abs(d) <= rel
    return check


def _points(check: Check, points: float) -> Check:
    assert check.theirs is not None
    d = 100 * (check.ours - check.theirs)
    check.diff = f"{d:+.1f} pt"
    check.passed = abs(d) <= points
    return check


@dataclass
class Plan:
    """How much to run: ``quick`` for tests (about a minute), full for the page."""

    quick: bool
    table5_intervals: int = 200
    table7_hours: float = 2000.0
    table8_frames: int = 2000
    fig22_seeds: int = 2
    fig22_cap_horizon_s: float = 7200.0
    fig22_gts_frames: int = 300          # per node: their numPackets = 300
    fig23_frames: int = 20000
    sensitivity: bool = True
    sensitivity_horizon_s: float = 3600.0

    @classmethod
    def make(cls, quick: bool) -> Plan:
        if not quick:
            return cls(False)
        return cls(True, table5_intervals=40, table7_hours=200.0, table8_frames=300,
                   fig22_seeds=1, fig22_cap_horizon_s=900.0, fig22_gts_frames=100,
                   fig23_frames=2000, sensitivity=False)


Progress = Callable[[str], None]


# -- Table 5 ----------------------------------------------------------------------------
def _frames_per_interval(scenario: str) -> float:
    return PAPER["table5_active"][scenario] / PAPER["table5_frame_mj"][scenario]


def table5(plan: Plan) -> Iterator[Check]:
    """S1 (CSMA/CA sender, receiver on in the CAP), S2 (GTS sender), S3 (GTS receiver)."""
    n = plan.table5_intervals
    horizon = BEACON_INTERVAL_S * n
    base = Scenario(nodes=1, duration_s=horizon, so=3, mo=3, bo=4, radius_m=10.0,
                    energy_profile="dsme-lora", payload_bytes=16)
    note = ("traffic: the frames per interval their active energy implies (active mJ / "
            "mJ per frame: S1 {S1:.2f}, S2 {S2:.2f}, S3 {S3:.2f}); their text says one frame "
            "per 20 s (0.77), which gives S2 32.4 mJ").format(
        **{k: _frames_per_interval(k) for k in ("S1", "S2", "S3")})
    s1 = base.with_(slot="cap", cap_rx=True, engine="events",
                    traffic=f"periodic:{BEACON_INTERVAL_S / _frames_per_interval('S1')}s")
    s2 = base.with_(traffic=f"periodic:{BEACON_INTERVAL_S / _frames_per_interval('S2')}s")
    results = {"S1": run(s1), "S2": run(s2), "S3": _gts_receiver(base, n)}
    causes = {
        "S1": "ours adds 3.02 mJ: static association gives every node an uplink GTS, woken "
              "for though unused (2 x (2.20 - 0.69) mJ); their S1 node has none",
        "S2": "the same per-event energies (Table 4); rounding of their averages",
        "S3": "ours adds 3.02 mJ: the node also holds the uplink GTS static association "
              "gives every node; their S3 node holds only the receive GTS",
    }
    for name, result in results.items():
        e = result.nodes[0].energy
        assert e is not None
        ours = e.power_mw * 0.9 * BEACON_INTERVAL_S
        yield _relative(Check(
            "table5", f"{name}: energy per beacon interval", "mJ", PAPER["table5"][name],
            ours, "arXiv 2206.14077, Table 5", "15%",
            method=f"event/batch engine, dsme-lora energy profile, {n} beacon intervals; "
                   + note, cause=causes[name]), 0.15)


def _gts_receiver(base: Scenario, intervals: int) -> RadioResult:
    """S3: the gateway sends the node one frame in its receive GTS at their rate."""
    s = base.with_(downlink_gts=True, engine="events", traffic="periodic:1e9s")
    net = RadioNetwork(s, traffic=False)
    net.start()
    gap = BEACON_INTERVAL_S / _frames_per_interval("S3")
    t = gap / 2
    while t < s.duration_s - 2 * BEACON_INTERVAL_S:
        net.kernel.call_at(t, lambda: net.gateway.send(1, b"x" * 16, slot="gts"))
        t += gap
    net.kernel.run(until=s.duration_s)
    return net.result()


# -- Table 7 ----------------------------------------------------------------------------
def _queue_at_arrival(result: RadioResult, msf_s: float, toa_s: float) -> np.ndarray:
    """Frames ahead of each delivered frame when it arrived: one per multisuperframe waited
    beyond the first slot (one GTS per multisuperframe, clean link)."""
    lat = np.concatenate([n.latencies_s for n in result.nodes])
    return np.floor((lat - toa_s - 1e-6) / msf_s).astype(np.int64)


def _gts_sender(mo: int, interval_s: float, horizon_s: float, seed: int = 1, *,
                bo: int | None = None, nodes: int = 1, layout: str = "disc", **kw: Any
                ) -> RadioResult:
    s = Scenario(nodes=nodes, duration_s=horizon_s, traffic=f"poisson:{interval_s}s", so=3,
                 mo=mo, bo=mo if bo is None else bo, radius_m=10.0, payload_bytes=16,
                 seed=seed, engine="batch", energy_profile="dsme-lora", **kw)
    if layout == "disc":
        return run(s)
    ctx = build_context(s)
    ctx.topology = Topology.rings(nodes, 10.0, ctx.topology.path_loss, s.seed,
                                  shadowing=s.shadowing)
    return run_batch(s, ctx)


def table7(plan: Plan) -> Iterator[Check]:
    rho_max = gts_queue.max_utilisation()
    for mo, (model_theirs, sim_theirs) in PAPER["table7"].items():
        msf = 0.96 * 2 ** mo
        ours_model = gts_queue.max_load_per_hour(msf, rho_max)
        yield _relative(Check(
            "table7", f"MO {mo}: maximum GTS load, model", "packets/h", model_theirs,
            ours_model, "arXiv 2206.14077, Table 7 (model)", "15%",
            "ours (the issue sets none)",
            method=f"our Markov model (Section 6): rho_max = {rho_max:.4f} where the 99.9% "
                   "quantile of the queue reaches openDSME's 22 frames",
            cause="their rho_max is rounded to 85.6%"), 0.15)
        result = _gts_sender(mo, msf / rho_max, plan.table7_hours * 3600.0)
        s = result.summary()
        per_hour = s["delivered"] / (result.scenario.duration_s / 3600.0)
        toa = time_on_air(LoRaParams(sf=7), 16 + 11)
        q = _queue_at_arrival(result, msf, toa)
        q999 = int(np.quantile(q, gts_queue.WORST_CASE_QUANTILE)) if len(q) else -1
        yield _relative(Check(
            "table7", f"MO {mo}: GTS load carried at rho_max, simulated", "packets/h",
            sim_theirs, per_hour, "arXiv 2206.14077, Table 7 (simulation)", "15%",
            "ours (the issue sets none)",
            method=f"batch engine, Poisson arrivals at rho_max, {plan.table7_hours:g} h; "
                   f"99.9% quantile of the queue seen at arrival: {q999} frames",
            cause="Poisson noise of a finite run; frames still queued at the end"), 0.15)


# -- Table 8 ----------------------------------------------------------------------------
def table8(plan: Plan) -> Iterator[Check]:
    horizon = plan.table8_frames * TABLE8_INTERVAL_S
    for mo, (delay, power, years) in PAPER["table8"].items():
        result = _gts_sender(mo, TABLE8_INTERVAL_S, horizon, bo=7,
                             battery_mah=TABLE8_BATTERY_MAH)
        e = result.nodes[0].energy
        assert e is not None
        method = (f"batch engine, SO 3, MO {mo}, BO 7, Poisson one frame per 15 min, "
                  f"{plan.table8_frames} frames, dsme-lora energy profile, 2800 mAh")
        yield _relative(Check(
            "table8", f"MO {mo}: power", "mW", power, e.power_mw, "arXiv 2206.14077, Table 8",
            "15%", method=method,
            cause="none beyond rounding: per-event energy of their Table 4, 90% regulator"),
            0.15)
        yield _relative(Check(
            "table8", f"MO {mo}: lifetime", "years", years, e.lifetime_days / YEAR_DAYS,
            "arXiv 2206.14077, Table 8", "15%", method=method + "; 3.3 V (inferred)",
            cause="3.3 V inferred from their power/lifetime pairs; their two association "
                  "intervals are not charged"), 0.15)
        lat = np.concatenate([n.latencies_s for n in result.nodes])
        yield _relative(Check(
            "table8", f"MO {mo}: mean delay", "s", delay, float(lat.mean()),
            "arXiv 2206.14077, Table 8 (from their model)", "15%",
            "ours (the issue sets none)",
            method=method, cause="simulated (theirs: Markov model); Poisson noise of "
                                 f"{plan.table8_frames} frames; our delay adds the airtime"),
            0.15)


# -- Fig. 22 ----------------------------------------------------------------------------
#: Their channel in our terms: shadowing drawn per frame (our per-frame fading), none fixed
#: per link (FLoRa's LoRaLogNormalShadowing, sigma 3.57 dB).
THEIR_CHANNEL = {"shadowing": False, "fading_sigma_db": 3.57}


def _cap_point(nodes: int, interval: int, seeds: int, horizon_s: float, *,
               layout: str = "disc", collision: str = "ours", airtime: str = "semtech",
               cad_rule: str = "ideal", **kw: Any) -> dict[str, float]:
    """CAP traffic at one Fig. 22 point; ``layout="rings"``: their hosts' rings
    (:meth:`~dticn.radio.topology.Topology.rings`) instead of our disc; ``"sinks"``: the same
    rings with their 15 sinks receiving (each source sends to a sink drawn at random, the
    coordinator at the centre only beacons: :meth:`Topology.rings_with_sinks`); ``collision`` and
    ``airtime`` ``"flora"``: their simulator's collision rule and frame duration
    (:func:`~dticn.radio.context.with_flora_phy`); ``cad_rule`` ``"inet"``: CAD senses only
    frames begun while the node listened, as their INET radio
    (:data:`~dticn.phy.medium.CAD_RULES`)."""
    generated = delivered = drops = 0
    lat: list[np.ndarray] = []
    for seed in range(1, seeds + 1):
        s = Scenario(nodes=nodes, duration_s=horizon_s, traffic=f"poisson:{interval}s",
                     slot="cap", so=3, mo=5, bo=5, rx_chains=16, engine="events", seed=seed,
                     **{"radius_m": 10.0, "payload_bytes": FIG22_PAYLOAD,
                        "cap_plan": "dsme-lora", **kw})
        ctx = build_context(s)
        if layout == "rings":
            ctx.topology = Topology.rings(nodes, 10.0, ctx.topology.path_loss, s.seed,
                                          shadowing=s.shadowing)
        elif layout == "sinks":
            ctx.topology = Topology.rings_with_sinks(nodes, 10.0, ctx.topology.path_loss,
                                                     s.seed, sinks=FIG22_SINKS,
                                                     shadowing=s.shadowing)
            draw = np.random.default_rng([s.seed, 2206]).integers(0, FIG22_SINKS, size=nodes)
            ctx.sink_of = {i: nodes + 1 + int(k) for i, k in enumerate(draw, start=1)}
        ctx = with_flora_phy(ctx, collision=collision, airtime=airtime)
        net = RadioNetwork(s, ctx)
        net.medium.set_cad_rule(cad_rule)      # before any frame: their CCA or ours
        result = net.run()
        summary = result.summary()
        generated += summary["generated"]
        delivered += summary["delivered"]
        drops += summary["queue_drops"]
        lat.extend(n.latencies_s for n in result.nodes)
    delays = np.concatenate(lat) if lat else np.zeros(0)
    return {"delivery": delivered / generated if generated else float("nan"),
            "p50_s": float(np.median(delays)) if len(delays) else float("nan"),
            "under_10s": float((delays < 10).mean()) if len(delays) else float("nan"),
            "queue_drops": drops, "generated": generated}


def _cap_cause(nodes: int, interval: int, ours: float, theirs: float, layout: str) -> str:
    """Why our CAP delivery differs from theirs at one point (docs/dticn-validation.md)."""
    bound = fig22_link_budget(nodes)
    if layout == "rings":
        if abs(ours - theirs) <= 0.10:
            return ("their layout and channel reproduced: far sources lose frames to the link "
                    f"budget (within four attempts {bound['delivered_within_attempts']:.2f} at "
                    "most) and to hidden nodes, as theirs")
        return ("not explained by their layout and channel; unconfirmed frames (their stored "
                "configuration), their CSMA/CA, their 15 sinks, FLoRa's collision rule and "
                "frame duration: sensitivity table (FLoRa's 1 dB capture raises ours)")
    if abs(ours - theirs) <= 0.10:
        return "contention alike; every node 10 m from the gateway, all links clean"
    return ("every node 10 m from the gateway, all links clean: their simulation places "
            f"sources up to {bound['max_distance_m']:.0f} m from their sink with FLoRa's "
            "per-frame shadowing (link-budget table, next section)")


def fig22(plan: Plan, progress: Progress, layout: str = "disc") -> Iterator[Check]:
    """CAP and GTS at their four settings. ``disc``: the issue's reading (every node 10 m
    from the gateway, our per-link shadowing); ``rings``: their simulation's layout and
    channel (:meth:`Topology.rings`, :data:`THEIR_CHANNEL`)."""
    section = "fig22" if layout == "disc" else "fig22_layout"
    channel = THEIR_CHANNEL if layout == "rings" else {}
    where = ("their layout (rings 10 m apart, gateway at their sinks' arc), shadowing "
             "3.57 dB per frame" if layout == "rings" else "10 m disc, per-link shadowing")
    for (nodes, interval), theirs in PAPER["fig22_cap_delivery"].items():
        progress(f"Fig. 22 CAP ({layout}), {nodes} nodes, one frame per {interval} s")
        p = _cap_point(nodes, interval, plan.fig22_seeds, plan.fig22_cap_horizon_s,
                       layout=layout, **channel)
        method = (f"event engine, dsme-lora CAP plan, {plan.fig22_seeds} seed(s) x "
                  f"{plan.fig22_cap_horizon_s / 3600:g} h, 16 B, confirmed, Poisson, {where}; "
                  f"queue drops {p['queue_drops']}")
        yield _points(Check(
            section, f"CAP delivery, {nodes} nodes, 1/{interval} s", "ratio", theirs,
            p["delivery"], "arXiv 2206.14077, Fig. 22 (read off the plot)", "10 points",
            method=method, cause=_cap_cause(nodes, interval, p["delivery"], theirs, layout)),
            10)
        check = Check(section, f"CAP median delay, {nodes} nodes, 1/{interval} s", "s", 10.0,
                      p["p50_s"],
                      "arXiv 2206.14077, Fig. 22, Section 7.2 (\"majority under 10 s\")",
                      "< 10 s", method=method + f"; {100 * p['under_10s']:.1f}% under 10 s",
                      cause="ideal sensing and a short CAP queue keep delays short")
        check.diff = f"{p['p50_s'] - 10.0:+.1f} s"
        check.passed = p["p50_s"] < 10.0
        yield check
    for nodes in (100, 300):
        for interval in (80, 40):
            progress(f"Fig. 22 GTS ({layout}), {nodes} nodes, one frame per {interval} s")
            result = _gts_sender(5, interval, plan.fig22_gts_frames * interval, nodes=nodes,
                                 rx_chains=16, layout=layout, **channel)
            s = result.summary()
            lat = np.concatenate([n.latencies_s for n in result.nodes])
            method = (f"batch engine, MO 5, one uplink GTS per node, {plan.fig22_gts_frames} "
                      f"frames per node (theirs: 300), Poisson, 16 B, {where}")
            far = layout == "rings" and nodes == 300
            yield _points(Check(
                section, f"GTS delivery, {nodes} nodes, 1/{interval} s", "ratio",
                PAPER["fig22_gts_delivery"], s["delivery_ratio"],
                "arXiv 2206.14077, Fig. 22, Section 7.2 (\"~100%\")", "10 points",
                method=method,
                cause=("GTS frames cross the same far links: retries fill the slots and the "
                       "queues grow; their ~100% does not fit this layout and channel"
                       if far else "frames still queued at the end of the run count as lost")),
                10)
            check = Check(
                section, f"GTS maximum delay, {nodes} nodes, 1/{interval} s", "s",
                PAPER["fig22_gts_max_delay_s"][interval], float(lat.max()),
                "arXiv 2206.14077, Section 7.2 (\"~120 s\", \"~500 s\")", "-", "none (a maximum "
                "depends on the run's length)", method=method + f"; mean {lat.mean():.1f} s",
                cause=("retries on far links" if far else
                       "the largest of a finite sample; mean as their model (Fig. 23)"))
            check.diff = f"{100 * (check.ours - check.theirs) / check.theirs:+.0f}%"
            yield check


#: One setting at a time (each with its source): the issue's reading (disc) with one of
#: their settings, and their layout and channel with the rest of their stored configuration.
SENSITIVITY: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("10 m disc, 20 B items (the earlier bench)", "benchmarks/bench_cap_fig22.py",
     {"payload_bytes": 20}),
    ("10 m disc, their CSMA/CA (macMinBE 7, macMaxBE 8, NB 5) and openDSME's CAP timing "
     "(plan dsme-lora-sim)",
     "Section 5.1/5.3; " + SIM_SOURCE + ", simulations/common.ini; " + CAP_SOURCE,
     {"cap_plan": "dsme-lora-sim"}),
    ("10 m disc, unconfirmed CAP frames (their ackReq = false)",
     SIM_SOURCE + ", simulations/common.ini", {"cap_ack": False}),
    ("10 m disc, CAD misses 20% of busy channels (no source; theirs: CADEff = 1)",
     "none", {"cad_miss_prob": 0.2}),
    ("their layout, our per-link shadowing", SIM_SOURCE + ", StaticConcentricMobility",
     {"layout": "rings"}),
    ("their layout and channel, unconfirmed (their ackReq = false)",
     SIM_SOURCE + "; inetrg/flora 3f835bb", {"layout": "rings", **THEIR_CHANNEL,
                                             "cap_ack": False}),
    ("their layout and channel, their CSMA/CA and CAP timing (dsme-lora-sim)",
     SIM_SOURCE + "; inetrg/flora 3f835bb; " + CAP_SOURCE, {"layout": "rings", **THEIR_CHANNEL,
                                             "cap_plan": "dsme-lora-sim"}),
    ("their stored configuration: layout, channel, CSMA/CA and CAP timing, unconfirmed",
     SIM_SOURCE + "; inetrg/flora 3f835bb; " + CAP_SOURCE, {"layout": "rings", **THEIR_CHANNEL,
                                             "cap_plan": "dsme-lora-sim", "cap_ack": False}),
)


#: The sensitivity rows the CAP-timing section quotes.
OPENDSME_DISC = SENSITIVITY[1][0]
OPENDSME_STORED = SENSITIVITY[7][0]


#: FLoRa's PHY as their Fig. 22 simulation ran it (inetrg/flora 3f835bb with inetrg/dsme_lora
#: e94c7e5): its collision rule (1 dB capture, each interferer alone, the first 2 preamble
#: symbols free: :class:`~dticn.phy.collision.FloraCollision`) and its frame duration (3 to 8
#: symbols over Semtech's: ``rule="flora"`` of :mod:`dticn.phy.airtime`), alone and together,
#: on the disc and in their layout and channel; :data:`FLORA_SEEDS` seeds per point.
FLORA_RX = "inetrg/flora 3f835bb, src/LoRaPhy/LoRaReceiver.{h,cc} (isPacketCollided)"
FLORA_TOA = "inetrg/dsme_lora e94c7e5, src/LoRaDSMETransmitter.cc (createTransmission)"
FLORA_SEEDS = 3
FLORA_RULE = "their layout and channel, FLoRa's collision rule"
FLORA_SINKS_BOTH = ("their layout and channel, their 15 sinks, FLoRa's collision rule and "
                    "frame duration")
FLORA_BOTH = "their layout and channel, FLoRa's collision rule and frame duration"
FLORA_SENSITIVITY: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("10 m disc, FLoRa's collision rule", FLORA_RX, {"collision": "flora"}),
    ("10 m disc, FLoRa's frame duration", FLORA_TOA, {"airtime": "flora"}),
    ("10 m disc, FLoRa's collision rule and frame duration", FLORA_RX + "; " + FLORA_TOA,
     {"collision": "flora", "airtime": "flora"}),
    (FLORA_RULE, FLORA_RX,
     {"layout": "rings", **THEIR_CHANNEL, "collision": "flora"}),
    ("their layout and channel, FLoRa's frame duration", FLORA_TOA,
     {"layout": "rings", **THEIR_CHANNEL, "airtime": "flora"}),
    (FLORA_BOTH, FLORA_RX + "; " + FLORA_TOA,
     {"layout": "rings", **THEIR_CHANNEL, "collision": "flora", "airtime": "flora"}),
    ("their layout and channel, their 15 sinks (peer to peer)",
     SIM_SOURCE + ", s_100_a_15_aps_1.ini / s_300_a_15_aps_1.ini",
     {"layout": "sinks", **THEIR_CHANNEL}),
    (FLORA_SINKS_BOTH, SIM_SOURCE + "; " + FLORA_RX + "; " + FLORA_TOA,
     {"layout": "sinks", **THEIR_CHANNEL, "collision": "flora", "airtime": "flora"}),
    ("their stored configuration (layout, channel, 15 sinks, CSMA/CA and CAP timing, "
     "unconfirmed) with FLoRa's collision rule and frame duration",
     SIM_SOURCE + "; " + FLORA_RX + "; " + FLORA_TOA + "; " + CAP_SOURCE,
     {"layout": "sinks", **THEIR_CHANNEL, "cap_plan": "dsme-lora-sim", "cap_ack": False,
      "collision": "flora", "airtime": "flora"}),
    ("their stored configuration (layout, channel, CSMA/CA and CAP timing, unconfirmed) "
     "with FLoRa's collision rule and frame duration",
     SIM_SOURCE + "; " + FLORA_RX + "; " + FLORA_TOA + "; " + CAP_SOURCE,
     {"layout": "rings", **THEIR_CHANNEL, "cap_plan": "dsme-lora-sim", "cap_ack": False,
      "collision": "flora", "airtime": "flora"}),
)


#: The dsme-lora-sim readings again with their INET radio's CCA (``cad_rule="inet"``: a
#: frame begun while the node was not listening stays unseen; inetrg/dsme_lora e94c7e5
#: src/DSMEPlatform.cc ccaTimer and receiveSignal, inetrg/inet 6498d24 Radio.cc
#: startReception/updateTransceiverState), :data:`INET_CAD_SEEDS` seed(s) per point.
INET_CAD = ("inetrg/dsme_lora e94c7e5, src/DSMEPlatform.cc (startCCA, ccaTimer, receiveSignal); "
            "inetrg/inet 6498d24, src/inet/physicallayer/wireless/common/radio/packetlevel/"
            "Radio.cc (startReception, updateTransceiverState)")
INET_CAD_SEEDS = 3
INET_CAD_SENSITIVITY: tuple[tuple[str, str, dict[str, Any]], ...] = (
    (SENSITIVITY[1][0] + ", CAD as their INET radio", INET_CAD,
     {**SENSITIVITY[1][2], "cad_rule": "inet"}),
    (OPENDSME_STORED + ", CAD as their INET radio", INET_CAD,
     {**SENSITIVITY[7][2], "cad_rule": "inet"}),
    (FLORA_SENSITIVITY[8][0] + ", CAD as their INET radio", INET_CAD,
     {**FLORA_SENSITIVITY[8][2], "cad_rule": "inet"}),
)


def _sensitivity_row(plan: Plan, progress: Progress, label: str, source: str,
                     change: dict[str, Any], seeds: int) -> dict[str, Any]:
    row: dict[str, Any] = {"setting": label, "source": source, "seeds": seeds, "points": {}}
    for (nodes, interval), theirs in PAPER["fig22_cap_delivery"].items():
        progress(f"Fig. 22 sensitivity: {label}: {nodes} nodes, 1/{interval} s")
        p = _cap_point(nodes, interval, seeds, plan.sensitivity_horizon_s, **change)
        row["points"][f"{nodes}/{interval}"] = {
            "delivery": p["delivery"], "theirs": theirs, "p50_s": p["p50_s"],
            "under_10s": p["under_10s"], "queue_drops": p["queue_drops"]}
    deltas = [abs(v["delivery"] - v["theirs"]) for v in row["points"].values()]
    row["max_gap_points"] = 100 * max(deltas)
    return row


def fig22_sensitivity(plan: Plan, progress: Progress) -> list[dict[str, Any]]:
    """The sensitivity table: :data:`SENSITIVITY` (one seed) and :data:`FLORA_SENSITIVITY`
    (:data:`FLORA_SEEDS` seeds)."""
    rows = [_sensitivity_row(plan, progress, label, source, change, 1)
            for label, source, change in SENSITIVITY]
    rows += [_sensitivity_row(plan, progress, label, source, change, FLORA_SEEDS)
             for label, source, change in FLORA_SENSITIVITY]
    rows += [_sensitivity_row(plan, progress, label, source, change, INET_CAD_SEEDS)
             for label, source, change in INET_CAD_SENSITIVITY]
    return rows


#: Parts of a report :func:`rerun` can run again, keeping the rest of the JSON
#: (``fig22-sensitivity-missing``: only the sensitivity rows the report lacks).
RERUN_PARTS = ("fig22", "fig22-layout", "fig22-sensitivity", "fig22-sensitivity-missing")


def rerun(doc: dict[str, Any], parts: list[str], progress: Progress | None = None
          ) -> dict[str, Any]:
    """Run ``parts`` of a report again (full mode) and put them into ``doc``; the other
    sections keep their committed numbers (a full run takes hours on a shared machine)."""
    unknown = [p for p in parts if p not in RERUN_PARTS]
    if unknown:
        raise ValueError(f"cannot rerun {', '.join(unknown)}; parts: {', '.join(RERUN_PARTS)}")
    say = progress or (lambda label: None)
    plan = Plan.make(bool(doc.get("quick")))
    titles = dict(SECTIONS)
    for part, key, layout in (("fig22", "fig22", "disc"), ("fig22-layout", "fig22_layout",
                                                             "rings")):
        if part in parts:
            doc["sections"][key] = _section(titles[key], list(fig22(plan, say, layout=layout)))
    if "fig22-sensitivity" in parts:
        doc["fig22_sensitivity"] = fig22_sensitivity(plan, say)
    elif "fig22-sensitivity-missing" in parts:
        have = {r["setting"]: r for r in doc.get("fig22_sensitivity", [])}
        rows = []
        for table, seeds in ((SENSITIVITY, 1), (FLORA_SENSITIVITY, FLORA_SEEDS),
                             (INET_CAD_SENSITIVITY, INET_CAD_SEEDS)):
            for label, source, change in table:
                rows.append(have.get(label) or _sensitivity_row(plan, say, label, source,
                                                                change, seeds))
        doc["fig22_sensitivity"] = rows
    return doc


# -- Fig. 22: their layout's link budget ---------------------------------------------------
#: FLoRa's channel as their simulation used it (inetrg/flora 3f835bb, the dsme_lora
#: submodule): log-distance path loss PL(40 m) = 127.41 dB, exponent 2.08, log-normal
#: shadowing of 3.57 dB drawn per frame (src/LoRaPhy/LoRaLogNormalShadowing.{ned,cc}), SF7 /
#: 125 kHz sensitivity -124 dBm (src/LoRaPhy/LoRaReceiver.cc); 14 dBm (their DSMEPlatform.cc
#: sets the LoRa tag's power); 15 sinks on the outer ring (hosts N..N+14, N sources), each
#: source sending to a sink drawn at random (their s_<N>_a_15_aps_1.ini); macMaxFrameRetries
#: 3 (their DSME.ned default): four attempts.
FLORA_CHANNEL = {"pl_d0_db": 127.41, "d0_m": 40.0, "gamma": 2.08, "sigma_db": 3.57,
                 "sensitivity_dbm": -124.0, "tx_dbm": 14.0, "attempts": 4}
FIG22_SINKS = 15


def fig22_link_budget(nodes: int, seed: int = 1) -> dict[str, float]:
    """What their layout's links alone allow, before any contention: the mean chance that a
    frame reaches the source's sink, that frame and ACK both do, and that one of the four
    attempts succeeds (shadowing independent per frame, as in FLoRa)."""
    c = FLORA_CHANNEL
    pos = concentric_positions(nodes + FIG22_SINKS, 10.0)
    rng = np.random.default_rng([seed, 2206])
    sinks = nodes + rng.integers(0, FIG22_SINKS, size=nodes)
    d = np.hypot(*(pos[:nodes] - pos[sinks]).T)
    loss = c["pl_d0_db"] + 10 * c["gamma"] * np.log10(d / c["d0_m"])
    margin = c["tx_dbm"] - loss - c["sensitivity_dbm"]
    p = np.array([0.5 * math.erfc(-m / (c["sigma_db"] * math.sqrt(2.0))) for m in margin])
    both = p * p
    return {"max_distance_m": float(d.max()), "mean_distance_m": float(d.mean()),
            "frame_reaches_sink": float(p.mean()), "frame_and_ack": float(both.mean()),
            "delivered_within_attempts": float((1 - (1 - both) ** c["attempts"]).mean())}


# -- Fig. 23 ----------------------------------------------------------------------------
def fig23(plan: Plan) -> Iterator[Check]:
    for (interval, mo), theirs in PAPER["fig23"].items():
        msf = 0.96 * 2 ** mo
        yield _relative(Check(
            "fig23", f"1/{interval} s, MO {mo}: mean delay, model", "s", theirs,
            gts_queue.mean_delay_s(msf, interval), "arXiv 2206.14077, Fig. 23b", "15%",
            "ours (the issue sets none)", method="our Markov model (Section 6, 100 states)",
            cause="none: the same equations"), 0.15)
        result = _gts_sender(mo, interval, plan.fig23_frames * interval)
        lat = np.concatenate([n.latencies_s for n in result.nodes])
        yield _relative(Check(
            "fig23", f"1/{interval} s, MO {mo}: mean delay, simulated", "s", theirs,
            float(lat.mean()), "arXiv 2206.14077, Fig. 23b", "15%",
            "ours (the issue sets none)",
            method=f"batch engine, Poisson, {plan.fig23_frames} frames, 16 B",
            cause="finite run (slow relaxation near rho = 1); our delay adds the airtime "
                  "and the frame's position in its slot"), 0.15)


# -- the whole report ---------------------------------------------------------------------
SECTIONS: tuple[tuple[str, str], ...] = (
    ("table5", "Table 5: energy per beacon interval"),
    ("table7", "Table 7: maximum GTS load"),
    ("table8", "Table 8: GTS sender power, lifetime and delay"),
    ("fig22", "Fig. 22: CAP and GTS at 100/300 nodes, every node 10 m from the gateway"),
    ("fig22_layout", "Fig. 22 in their simulation's layout and channel"),
    ("fig23", "Fig. 23b: GTS mean delay"),
)


def _section(title: str, checks: list[Check]) -> dict[str, Any]:
    """One section of the report's JSON: its rows and how many of the judged ones pass."""
    rows = [c.as_dict() for c in checks]
    judged = [r for r in rows if r["passed"] is not None]
    return {"title": title, "rows": rows, "passed": sum(bool(r["passed"]) for r in judged),
            "judged": len(judged)}


@dataclass
class Report:
    quick: bool
    checks: list[Check] = field(default_factory=list)
    sensitivity: list[dict[str, Any]] = field(default_factory=list)
    link_budget: dict[str, dict[str, float]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        sections = {key: _section(title, [c for c in self.checks if c.section == key])
                    for key, title in SECTIONS}
        return {"source": SOURCE, "quick": self.quick, "sections": sections,
                "fig22_sensitivity": self.sensitivity,
                "fig22_link_budget": self.link_budget}


def validate(quick: bool = False, progress: Progress | None = None) -> Report:
    """Run every section; ``progress(label)`` before each step."""
    say = progress or (lambda label: None)
    plan = Plan.make(quick)
    report = Report(quick)
    steps: list[tuple[str, Callable[[], Iterator[Check]]]] = [
        ("Table 5 (S1, S2, S3)", lambda: table5(plan)),
        ("Table 7 (model and simulation)", lambda: table7(plan)),
        ("Table 8 (MO 3-7)", lambda: table8(plan)),
        ("Fig. 23 (model and simulation)", lambda: fig23(plan)),
        ("Fig. 22", lambda: fig22(plan, say)),
        ("Fig. 22 in their layout", lambda: fig22(plan, say, layout="rings")),
    ]
    for label, step in steps:
        say(label)
        report.checks.extend(step())
    report.link_budget = {str(n): fig22_link_budget(n) for n in (100, 300)}
    if plan.sensitivity:
        report.sensitivity = fig22_sensitivity(plan, say)
    return report


def step_count(quick: bool) -> int:
    """Progress steps :func:`validate` reports (for a progress bar's total)."""
    plan = Plan.make(quick)
    n = 6 + 16
    if plan.sensitivity:
        n += ((len(SENSITIVITY) + len(FLORA_SENSITIVITY) + len(INET_CAD_SENSITIVITY))
              * len(PAPER["fig22_cap_delivery"]))
    return n


# -- Markdown ---------------------------------------------------------------------------
def _fmt(value: float | None, unit: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if unit == "ratio":
        return f"{value:.3f}"
    if abs(value) >= 100:
        return f"{value:.1f}"
    return f"{value:.3g}" if abs(value) < 1 else f"{value:.2f}"


_SECTION_NOTES: dict[str, list[str]] = {
    "fig22": [
        "The issue's reading of Fig. 22: every node 10 m from the gateway (a disc), our "
        "channel (shadowing fixed per link), 16-byte items (their `packetLength`), confirmed "
        "frames as the paper says (Section 7.2), the `dsme-lora` CAP plan, ideal CCA.", ""],
    "fig22_layout": [
        "Their simulation as stored (inetrg/dsme_lora e94c7e5) does not put the nodes 10 m "
        "from the sink: INET's StaticConcentricMobility with `distance = 10m` places the "
        "hosts on rings 10 m apart, the 15 sinks on the outer ring, and FLoRa draws 3.57 dB "
        "of shadowing for every frame. Here ours runs in that layout (one gateway in the "
        "middle of their sinks' arc: `Topology.rings`) with that channel (shadowing per "
        "frame, none per link), everything else as in the section above. The GTS rows show "
        "what the same far links do to GTS traffic; compare their ~100% delivery and at "
        "most ~120 s / ~500 s.", ""],
}


def _fig22_in_short(doc: dict[str, Any]) -> list[str]:
    """The Fig. 22 CAP findings in a few lines, from the report's numbers."""
    def cap(section: str) -> str:
        rows = [r for r in doc["sections"].get(section, {}).get("rows", [])
                if r["item"].startswith("CAP delivery")]
        return ", ".join(f"{r['item'].split(', ', 1)[1]}: {r['ours']:.2f} vs {r['theirs']:.2f}"
                         for r in rows)
    lines = ["Fig. 22 CAP delivery in short (ours vs theirs):", "",
             f"* every node 10 m from the gateway: {cap('fig22')};",
             f"* in their simulation's layout and channel: {cap('fig22_layout')};"]
    if doc.get("fig22_sensitivity"):
        best = min(doc["fig22_sensitivity"], key=lambda r: r["max_gap_points"])
        lines.append(f"* closest single variant of the sensitivity table: {best['setting']} "
                     f"(largest gap {best['max_gap_points']:.1f} points).")
    flora = {r["setting"]: r for r in doc.get("fig22_sensitivity", [])}
    both = flora.get(FLORA_BOTH)
    if both is not None:
        line = "* with FLoRa's own PHY"
        for setting in (FLORA_BOTH, FLORA_SINKS_BOTH):
            row = flora.get(setting)
            if row is None:
                continue
            cells = ", ".join(f"{p} {v['delivery']:.2f} vs {v['theirs']:.2f}"
                              for p, v in row["points"].items())
            verdict = ("all four within 10 points" if row["max_gap_points"] <= 10
                       else "the 10-point target stays unmet")
            line += (f"{';' if setting != FLORA_BOTH else ''} ({setting}, "
                     f"{row.get('seeds', 1)} seeds): {cells} (largest gap "
                     f"{row['max_gap_points']:.1f} points): {verdict}")
        line += "."
        rule = flora.get(FLORA_RULE)
        base = {r["item"].split(", ", 1)[1]: r["ours"]
                for r in doc["sections"].get("fig22_layout", {}).get("rows", [])
                if r["item"].startswith("CAP delivery")}
        if rule is not None and len(base) == len(rule["points"]):
            higher = sum(v["delivery"] > base[f"{p.split('/')[0]} nodes, 1/{p.split('/')[1]} s"]
                         for p, v in rule["points"].items())
            line += (f" FLoRa's collision rule alone (1 dB capture, each interferer alone) "
                     "gives more delivery than our rule in the same layout and channel (section "
                     f"below) at {higher} of {len(base)} points.")
        gts = [r["ours"] for r in doc["sections"].get("fig22_layout", {}).get("rows", [])
               if r["item"].startswith("GTS delivery, 300 nodes")]
        line += (" Each FLoRa piece alone leaves out the other, which their simulator applies "
                 "too, so neither is a reading of their simulation")
        if gts:
            line += (", and their layout costs our GTS traffic at 300 nodes (delivery "
                     + " / ".join(f"{g:.2f}" for g in gts) + ", theirs ~1.00)")
        lines.append(line + ".")
    lines.append("* CCA: ideal in ours and in their simulation (`CADEff = 1`), so no CAD-miss "
                 "probability is set; a fitted one would have no source.")
    return [*lines, ""]


def _opendsme_section(doc: dict[str, Any]) -> list[str]:
    """Their CAP timing (openDSME as their simulation ran it) beside ours, and what the
    ``dsme-lora-sim`` plan, which now runs theirs, measured (:mod:`dticn.radio.opendsme_cap`)."""
    out = ["## Fig. 22: the CAP as their simulation ran it", "",
           "Their simulation's CAP, setting by setting, read from inetrg/dsme_lora e94c7e5 and "
           "the openDSME it pins (inetrg/openDSME de04814); the `dsme-lora-sim` CAP plan runs "
           "the rows marked in the last column (the `dsme-lora` plan of the main reading "
           "keeps ours).", "",
           "| setting | theirs (file) | ours (file) | in `dsme-lora-sim` |",
           "|---|---|---|---|"]
    out += [f"| {s.name} | {s.theirs} | {s.ours} | {s.in_plan} |" for s in COMPARISON]
    rows = {r["setting"]: r for r in doc.get("fig22_sensitivity", [])}
    measured = [rows[label] for label in (OPENDSME_DISC, OPENDSME_STORED) if label in rows]
    if measured:
        out += ["", "Measured with their CAP timing (rows of the table below):", ""]
        for row in measured:
            cells = ", ".join(f"{p} {v['delivery']:.2f} vs {v['theirs']:.2f}"
                              for p, v in row["points"].items())
            verdict = ("all four within 10 points" if row["max_gap_points"] <= 10
                       else "the 10-point target stays unmet")
            out.append(f"* {row['setting']}: {cells} (largest gap "
                       f"{row['max_gap_points']:.1f} points): {verdict}.")
        base = [r["ours"] for r in doc["sections"].get("fig22", {}).get("rows", [])
                if r["item"].startswith("CAP delivery")]
        disc = rows.get(OPENDSME_DISC)
        if disc is not None and len(base) == len(disc["points"]):
            higher = sum(v["delivery"] > b for v, b in zip(disc["points"].values(), base,
                                                           strict=True))
            out += ["", f"On the disc their CAP timing and CSMA/CA deliver more than our "
                    f"`dsme-lora` plan (first section) at {higher} of {len(base)} points. The "
                    "missing backoff boundaries do it (docs/dticn-radio.md, CAP section): "
                    "without them two nodes that hear each other collide only when their CCAs "
                    "end at the same instant; ours collide when they pick the same 20 ms "
                    "boundary."]
        if all(r["max_gap_points"] > 10 for r in measured):
            out += ["", "No faithful CAP setting brings all four points within 10 points: the "
                    "main reading keeps the `dsme-lora` plan and the Fig. 22 CAP target stays "
                    "unmet."]
    return [*out, ""]


def markdown(doc: dict[str, Any], *, command: str) -> str:
    """The validation page from a report's JSON (what ``dticn validate`` writes)."""
    mode = "quick mode: fewer seeds, shorter runs" if doc["quick"] else "full mode"
    out = [
        "# DT-ICN radio model against DSME-LoRa's published measurements",
        "",
        f"Ours beside {doc['source']}: every row names the table or figure it checks.",
        f"Generated by `{command}` ({mode}); from `dticn/`, `dticn validate --out "
        "benchmarks/results` writes this page with its JSON (`dticn-validation.json`) and "
        "figures (`dticn-validation-<section>.png`), `--from-json` rebuilds the page, and "
        "`--from-json ... --rerun fig22|fig22-layout|fig22-sensitivity` runs one part again, "
        "keeping the other numbers.",
        "Their values are as printed; \"~\" values of Fig. 22 are read off their plot. The",
        "tolerance is the issue's (issue 16) unless the row says \"ours\" (the issue sets",
        "none there).",
        "",
        "| section | rows within tolerance |",
        "|---|---:|",
    ]
    out += [f"| {sec['title']} | {sec['passed']} of {sec['judged']} |"
            for sec in doc["sections"].values()]
    out.append("")
    out += _fig22_in_short(doc)
    for key, section in doc["sections"].items():
        out += [f"## {section['title']}", "", *_SECTION_NOTES.get(key, []),
                f"{section['passed']} of {section['judged']} judged rows within tolerance.",
                "", "| check | theirs | ours | difference | tolerance | pass | source | "
                "cause of the difference |", "|---|---:|---:|---:|---|---|---|---|"]
        for r in section["rows"]:
            verdict = "-" if r["passed"] is None else ("yes" if r["passed"] else "**no**")
            tol = r["tolerance"] + ("" if r["tolerance_source"] == "issue 16"
                                    else f"; {r['tolerance_source']}")
            # a threshold ("< 10 s") is what they state, not a value of theirs
            theirs = (f"most {r['tolerance']}" if r["tolerance"].startswith("<")
                      else _fmt(r["theirs"], r["unit"]))
            out.append(f"| {r['item']} ({r['unit']}) | {theirs} | "
                       f"{_fmt(r['ours'], r['unit'])} | {r['diff']} | {tol} | {verdict} | "
                       f"{r['source']} | {r['cause']} |")
        methods = sorted({r["method"] for r in section["rows"]})
        out += ["", "How ours was run:", ""] + [f"* {m}" for m in methods] + [""]
    if doc.get("fig22_link_budget"):
        out += ["## Fig. 22: their layout's link budget", "",
                "Their simulation places the hosts on rings 10 m apart (INET "
                "StaticConcentricMobility) with the 15 sinks on the outer ring, so a source "
                "is up to 120 m (100 nodes) or 200 m (300 nodes) from its sink; FLoRa draws "
                "3.57 dB of shadowing per frame against a -124 dBm sensitivity (SF7, 14 dBm). "
                "Before any contention the links alone lose frames (our computation from that "
                "geometry and channel, each source sending to a sink drawn at random):", "",
                "| nodes | farthest / mean distance, m | frame reaches its sink | frame and "
                "ACK | delivered within 4 attempts |", "|---|---:|---:|---:|---:|"]
        for key, v in doc["fig22_link_budget"].items():
            out.append(f"| {key} | {v['max_distance_m']:.0f} / {v['mean_distance_m']:.0f} | "
                       f"{v['frame_reaches_sink']:.3f} | {v['frame_and_ack']:.3f} | "
                       f"{v['delivered_within_attempts']:.3f} |")
        out.append("")
    if doc["fig22_sensitivity"]:
        out += _opendsme_section(doc)
        points = list(doc["fig22_sensitivity"][0]["points"])
        out += ["## Fig. 22 CAP gap: one setting at a time", "",
                "CAP delivery (ours) under the `dsme-lora` plan with one setting changed "
                "(median CAP delay in brackets), 1 h per seed and point, 1 seed unless the "
                "setting says; their values in the header.", "",
                "| setting | " + " | ".join(
                    f"{p} (theirs {doc['fig22_sensitivity'][0]['points'][p]['theirs']:.2f})"
                    for p in points) + " | largest gap | source |",
                "|---|" + "---:|" * len(points) + "---:|---|"]
        for row in doc["fig22_sensitivity"]:
            cells = " | ".join(f"{row['points'][p]['delivery']:.3f} "
                               f"({row['points'][p]['p50_s']:.1f} s)" for p in points)
            seeds = row.get("seeds", 1)
            label = row["setting"] + (f" ({seeds} seeds)" if seeds > 1 else "")
            out.append(f"| {label} | {cells} | {row['max_gap_points']:.1f} pt | "
                       f"{row['source']} |")
        out.append("")
        out += _inet_cad_note(doc)
    return "\n".join(out)


INET_CAD_SUFFIX = ", CAD as their INET radio"


def _inet_cad_note(doc: dict[str, Any]) -> list[str]:
    """What their INET radio's CCA changes: each ``... CAD as their INET radio`` row beside
    the same setting with our CAD, judged from the numbers."""
    rows = {r["setting"]: r for r in doc["fig22_sensitivity"]}
    pairs = [(rows[label[:-len(INET_CAD_SUFFIX)]], r) for label, r in rows.items()
             if label.endswith(INET_CAD_SUFFIX) and label[:-len(INET_CAD_SUFFIX)] in rows]
    if not pairs:
        return []
    shift = max(100 * abs(r["points"][p]["delivery"] - base["points"][p]["delivery"])
                for base, r in pairs for p in r["points"])
    best = min((r for _, r in pairs), key=lambda r: r["max_gap_points"])
    met = best["max_gap_points"] <= 10.0
    return ["Their CCA as their INET radio runs it (inetrg/dsme_lora e94c7e5, "
            "src/DSMEPlatform.cc: the CCA is idle only when the radio's reception state did not "
            "change during its 8 symbols and reads BUSY (their comment: the LoRa radio uses BUSY "
            "instead of IDLE); inetrg/inet "
            "6498d24, Radio.cc startReception: a frame is "
            "tracked only if the radio was in receiver mode as it began, and their platform "
            "returns to receiver mode as each transmission ends): under `cad_rule=\"inet\"` a "
            "frame that began while the sensing node transmitted is not sensed. It moves CAP "
            f"delivery by at most {shift:.1f} points against the same settings with our CAD "
            "(seeds as each row says); "
            f"the closest reading ({best['setting']}) stays {best['max_gap_points']:.1f} points "
            "from theirs at its worst point, so "
            + ("all four points come within 10 points." if met else
               "this is not what keeps the Fig. 22 CAP target unmet."), ""]
