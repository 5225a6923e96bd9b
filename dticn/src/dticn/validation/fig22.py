"""DSME-LoRa's Fig. 22: CAP and GTS delivery and delay at 100 and 300 nodes, on the issue's
reading (every node 10 m from the gateway) and in their simulation's layout and channel;
and what their layout's links alone allow (the link budget)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from dticn.radio.context import build_context, with_flora_phy
from dticn.radio.network import RadioNetwork
from dticn.radio.scenario import Scenario
from dticn.radio.topology import Topology, concentric_positions
from dticn.validation.checks import Check, Plan, Progress, within_points
from dticn.validation.dsme_tables import gts_sender
from dticn.validation.paper import (
    FIG22_PAYLOAD,
    FIG22_SINKS,
    FLORA_CHANNEL,
    PAPER,
    THEIR_CHANNEL,
)

GTS_POINTS: tuple[tuple[int, int], ...] = ((100, 80), (100, 40), (300, 80), (300, 40))
"""The GTS settings of Fig. 22 (nodes, seconds between frames), in the page's order."""


def progress_steps() -> int:
    """Progress labels one :func:`fig22` run says (one per CAP and per GTS point)."""
    return len(PAPER["fig22_cap_delivery"]) + len(GTS_POINTS)


def cap_point(nodes: int, interval: int, seeds: int, horizon_s: float, *,
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
        p = cap_point(nodes, interval, plan.fig22_seeds, plan.fig22_cap_horizon_s,
                       layout=layout, **channel)
        method = (f"event engine, dsme-lora CAP plan, {plan.fig22_seeds} seed(s) x "
                  f"{plan.fig22_cap_horizon_s / 3600:g} h, 16 B, confirmed, Poisson, {where}; "
                  f"queue drops {p['queue_drops']}")
        yield within_points(Check(
            section, f"CAP delivery, {nodes} nodes, 1/{interval} s", "ratio", theirs,
            p["delivery"], "arXiv 2206.14077, Fig. 22 (read off the plot)", "10 points",
            method=method, cause=_cap_cause(nodes, interval, p["delivery"], theirs, layout),
            metric="cap_delivery", point=f"{nodes}/{interval}"), 10)
        check = Check(section, f"CAP median delay, {nodes} nodes, 1/{interval} s", "s", 10.0,
                      p["p50_s"],
                      "arXiv 2206.14077, Fig. 22, Section 7.2 (\"majority under 10 s\")",
                      "< 10 s", method=method + f"; {100 * p['under_10s']:.1f}% under 10 s",
                      cause="ideal sensing and a short CAP queue keep delays short",
                      metric="cap_p50_s", point=f"{nodes}/{interval}")
        check.diff = f"{p['p50_s'] - 10.0:+.1f} s"
        check.passed = p["p50_s"] < 10.0
        yield check
    for nodes, interval in GTS_POINTS:
        progress(f"Fig. 22 GTS ({layout}), {nodes} nodes, one frame per {interval} s")
        result = gts_sender(5, interval, plan.fig22_gts_frames * interval, nodes=nodes,
                             rx_chains=16, layout=layout, **channel)
        s = result.summary()
        lat = np.concatenate([n.latencies_s for n in result.nodes])
        method = (f"batch engine, MO 5, one uplink GTS per node, {plan.fig22_gts_frames} "
                  f"frames per node (theirs: 300), Poisson, 16 B, {where}")
        far = layout == "rings" and nodes == 300
        yield within_points(Check(
            section, f"GTS delivery, {nodes} nodes, 1/{interval} s", "ratio",
            PAPER["fig22_gts_delivery"], s["delivery_ratio"],
            "arXiv 2206.14077, Fig. 22, Section 7.2 (\"~100%\")", "10 points",
            method=method,
            cause=("GTS frames cross the same far links: retries fill the slots and the "
                   "queues grow; their ~100% does not fit this layout and channel"
                   if far else "frames still queued at the end of the run count as lost"),
            metric="gts_delivery", point=f"{nodes}/{interval}"), 10)
        check = Check(
            section, f"GTS maximum delay, {nodes} nodes, 1/{interval} s", "s",
            PAPER["fig22_gts_max_delay_s"][interval], float(lat.max()),
            "arXiv 2206.14077, Section 7.2 (\"~120 s\", \"~500 s\")", "-", "none (a maximum "
            "depends on the run's length)", method=method + f"; mean {lat.mean():.1f} s",
            cause=("retries on far links" if far else
                   "the largest of a finite sample; mean as their model (Fig. 23)"),
            metric="gts_max_delay_s", point=f"{nodes}/{interval}")
        check.diff = f"{100 * (check.ours - check.theirs) / check.theirs:+.0f}%"
        yield check


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

