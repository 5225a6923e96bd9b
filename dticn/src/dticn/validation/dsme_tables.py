"""DSME-LoRa's Tables 5, 7, 8 and Fig. 23b: energy, GTS load, GTS power, lifetime and
delay, each with our simulator (and, for the GTS queue, our reimplementation of their Markov
model, :mod:`dticn.radio.gts_queue`) on their scenario."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from dticn.phy.airtime import LoRaParams, time_on_air
from dticn.radio import gts_queue
from dticn.radio.batch import run_batch
from dticn.radio.context import build_context
from dticn.radio.engines import run
from dticn.radio.network import RadioNetwork
from dticn.radio.results import RadioResult
from dticn.radio.scenario import Scenario
from dticn.radio.topology import Topology
from dticn.validation.checks import Check, Plan, within_relative
from dticn.validation.paper import (
    BEACON_INTERVAL_S,
    PAPER,
    TABLE8_BATTERY_MAH,
    TABLE8_INTERVAL_S,
    YEAR_DAYS,
)


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
        yield within_relative(Check(
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


def gts_sender(mo: int, interval_s: float, horizon_s: float, seed: int = 1, *,
                bo: int | None = None, nodes: int = 1, layout: str = "disc", **kw: Any
                ) -> RadioResult:
    """Poisson GTS senders at MO ``mo`` (SO 3, 16 B, batch engine, dsme-lora energy) on a
    10 m disc or (``layout="rings"``) their rings 10 m apart."""
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
        yield within_relative(Check(
            "table7", f"MO {mo}: maximum GTS load, model", "packets/h", model_theirs,
            ours_model, "arXiv 2206.14077, Table 7 (model)", "15%",
            "ours (the issue sets none)",
            method=f"our Markov model (Section 6): rho_max = {rho_max:.4f} where the 99.9% "
                   "quantile of the queue reaches openDSME's 22 frames",
            cause="their rho_max is rounded to 85.6%"), 0.15)
        result = gts_sender(mo, msf / rho_max, plan.table7_hours * 3600.0)
        s = result.summary()
        per_hour = s["delivered"] / (result.scenario.duration_s / 3600.0)
        toa = time_on_air(LoRaParams(sf=7), 16 + 11)
        q = _queue_at_arrival(result, msf, toa)
        q999 = int(np.quantile(q, gts_queue.WORST_CASE_QUANTILE)) if len(q) else -1
        yield within_relative(Check(
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
        result = gts_sender(mo, TABLE8_INTERVAL_S, horizon, bo=7,
                             battery_mah=TABLE8_BATTERY_MAH)
        e = result.nodes[0].energy
        assert e is not None
        method = (f"batch engine, SO 3, MO {mo}, BO 7, Poisson one frame per 15 min, "
                  f"{plan.table8_frames} frames, dsme-lora energy profile, 2800 mAh")
        yield within_relative(Check(
            "table8", f"MO {mo}: power", "mW", power, e.power_mw, "arXiv 2206.14077, Table 8",
            "15%", method=method,
            cause="none beyond rounding: per-event energy of their Table 4, 90% regulator"),
            0.15)
        yield within_relative(Check(
            "table8", f"MO {mo}: lifetime", "years", years, e.lifetime_days / YEAR_DAYS,
            "arXiv 2206.14077, Table 8", "15%", method=method + "; 3.3 V (inferred)",
            cause="3.3 V inferred from their power/lifetime pairs; their two association "
                  "intervals are not charged"), 0.15)
        lat = np.concatenate([n.latencies_s for n in result.nodes])
        yield within_relative(Check(
            "table8", f"MO {mo}: mean delay", "s", delay, float(lat.mean()),
            "arXiv 2206.14077, Table 8 (from their model)", "15%",
            "ours (the issue sets none)",
            method=method, cause="simulated (theirs: Markov model); Poisson noise of "
                                 f"{plan.table8_frames} frames; our delay adds the airtime"),
            0.15)



# -- Fig. 23 ----------------------------------------------------------------------------
def fig23(plan: Plan) -> Iterator[Check]:
    for (interval, mo), theirs in PAPER["fig23"].items():
        msf = 0.96 * 2 ** mo
        yield within_relative(Check(
            "fig23", f"1/{interval} s, MO {mo}: mean delay, model", "s", theirs,
            gts_queue.mean_delay_s(msf, interval), "arXiv 2206.14077, Fig. 23b", "15%",
            "ours (the issue sets none)", method="our Markov model (Section 6, 100 states)",
            cause="none: the same equations"), 0.15)
        result = gts_sender(mo, interval, plan.fig23_frames * interval)
        lat = np.concatenate([n.latencies_s for n in result.nodes])
        yield within_relative(Check(
            "fig23", f"1/{interval} s, MO {mo}: mean delay, simulated", "s", theirs,
            float(lat.mean()), "arXiv 2206.14077, Fig. 23b", "15%",
            "ours (the issue sets none)",
            method=f"batch engine, Poisson, {plan.fig23_frames} frames, 16 B",
            cause="finite run (slow relaxation near rho = 1); our delay adds the airtime "
                  "and the frame's position in its slot"), 0.15)

