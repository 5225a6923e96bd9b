"""Metrics of one run (from the observers of a :class:`~dticn.experiments.world.World`) and
their aggregation over seeds (mean and 95% confidence interval, Student t)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dticn.experiments.world import INTERNET_LINKS, LORA_LINK, World

METRICS = ("success_ratio", "latency_p50_s", "latency_p95_s", "internet_packets_per_item",
           "lora_frames_per_item", "lora_airtime_s_per_item", "node_energy_j_per_day",
           "lifetime_days")

# Two-sided 97.5% quantiles of Student's t for 1..30 degrees of freedom.
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
         2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
         2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def t_quantile_975(dof: int) -> float:
    """Student t quantile for a two-sided 95% interval (normal beyond 30 dof)."""
    if dof < 1:
        return float("nan")
    return _T975[dof - 1] if dof <= len(_T975) else 1.96


def _per_item(n: float, items: int) -> float:
    return n / items if items else float("nan")


def run_metrics(world: World) -> dict[str, Any]:
    """One row of metrics for a finished run."""
    exp = world.exp
    items = list(world.log.items.values())
    delivered = [i for i in items if i.outcome == "delivered"]
    latencies = np.asarray([i.done - i.started for i in delivered], dtype=float)
    n = len(delivered)
    counter = world.counter
    internet = sum(counter.total(link=lk) for lk in INTERNET_LINKS)
    result = world.radio.result()
    energies = [nd.energy for nd in result.nodes if nd.energy is not None]
    outcomes: dict[str, int] = {}
    for i in items:
        key = i.outcome or "pending"
        outcomes[key] = outcomes.get(key, 0) + 1
    per_link = {
        f"{lk}:{d}:{k}": v for (lk, d, k), v in counter.counts.items()
    }
    other = cap_rx_lifetimes(world, energies)
    return {
        "config": exp.config,
        "profile": world.profile.name,
        "cap_rx": world.profile.cap_rx,
        "energy_profile": world.profile.energy_profile,
        "mac": exp.mac,
        "seed": exp.seed,
        "duration_s": exp.duration_s,
        "loss": exp.loss,
        "nodes": exp.nodes,
        "items": len(items),
        "delivered": n,
        "outcomes": outcomes,
        "success_ratio": n / len(items) if items else float("nan"),
        "latency_p50_s": float(np.percentile(latencies, 50)) if n else float("nan"),
        "latency_p95_s": float(np.percentile(latencies, 95)) if n else float("nan"),
        "latencies_s": latencies.tolist(),
        "internet_packets_per_item": _per_item(internet, n),
        "internet_packets_per_transaction": _per_item(internet, len(items)),
        "lora_frames_per_transaction": _per_item(world.mac.frames, len(items)),
        "internet_interests_per_item": _per_item(
            sum(counter.total(link=lk, kind="interest") for lk in INTERNET_LINKS), n),
        "internet_data_per_item": _per_item(
            sum(counter.total(link=lk, kind="data") for lk in INTERNET_LINKS), n),
        "lora_interests_per_item": _per_item(counter.total(link=LORA_LINK, kind="interest"), n),
        "lora_data_per_item": _per_item(counter.total(link=LORA_LINK, kind="data"), n),
        "lora_frames_per_item": _per_item(world.mac.frames, n),
        "lora_airtime_s_per_item": _per_item(world.mac.airtime_s, n),
        "node_energy_j_per_day": float(np.mean([e.energy_per_day_j for e in energies])),
        "lifetime_days": float(min(e.lifetime_days for e in energies)),
        "lifetime_days_cap_rx_off": other[False],
        "lifetime_days_cap_rx_on": other[True],
        "battery_mah": energies[0].battery_mah,
        "packets_by_link": per_link,
    }


def cap_rx_lifetimes(world: World, energies: list[Any]) -> dict[bool, float]:
    """The shortest node lifetime under both CAP listen policies (issue 13, item 3).

    The run's own policy is measured; the other is the same run with the receiver on (or
    off) through every CAP, in closed form from the run's energy profile
    (``cap_listen_current_ma``): optimised, the CAP is ``cap_slots`` of the superframe's
    16 slots (8 of 16: half of all time), with the radio receiving and the MCU awake
    instead of both asleep; dsme-lora, their measured CAP RX on minus RX off per superframe.
    Wake-ups for the CAP and the node's own CAP transactions are left out (under 1% of the
    CAP).
    """
    if world.exp.mac != "dsme":      # LoRaWAN has no CAP: one policy, the measured one
        lifetime = float(min(e.lifetime_days for e in energies))
        return {False: lifetime, True: lifetime}
    ctx = world.radio.ctx
    timing = ctx.mac.timing
    cap_share = timing.cap_slots * timing.slot_s / timing.superframe_s
    delta_ma = ctx.energy_profile.cap_listen_current_ma(timing.superframe_s, cap_share)
    own = world.profile.cap_rx
    out: dict[bool, float] = {}
    for policy in (False, True):
        shift = 0.0 if policy == own else (delta_ma if policy else -delta_ma)
        out[policy] = float(min(
            e.battery_mah / max(e.avg_current_ma + shift, 1e-12) / 24.0 for e in energies))
    return out


def aggregate(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean and 95% CI half-width of every metric over the seeds of one configuration."""
    if not rows:
        raise ValueError("aggregate() needs at least one run")
    out: dict[str, Any] = {
        "config": rows[0]["config"], "profile": rows[0].get("profile", "model"),
        "cap_rx": rows[0].get("cap_rx", False),
        "energy_profile": rows[0].get("energy_profile", "optimised"),
        "mac": rows[0].get("mac", "dsme"),
        "seeds": [r["seed"] for r in rows],
        "duration_s": rows[0]["duration_s"], "loss": rows[0]["loss"],
        "nodes": rows[0]["nodes"], "battery_mah": rows[0]["battery_mah"],
        "items": sum(r["items"] for r in rows), "delivered": sum(r["delivered"] for r in rows),
    }
    extra = ("internet_packets_per_transaction", "lora_frames_per_transaction",
             "internet_interests_per_item", "internet_data_per_item",
             "lora_interests_per_item", "lora_data_per_item", "lifetime_days_cap_rx_off",
             "lifetime_days_cap_rx_on")
    for key in (*METRICS, *extra):
        values = np.asarray([r.get(key, float("nan")) for r in rows], dtype=float)
        finite = values[np.isfinite(values)]
        mean = float(finite.mean()) if len(finite) else float("nan")
        if len(finite) > 1:
            half = t_quantile_975(len(finite) - 1) * float(finite.std(ddof=1)) / math.sqrt(
                len(finite))
        else:
            half = float("nan")
        out[key] = mean
        out[f"{key}_ci95"] = half
    lat = np.concatenate([np.asarray(r["latencies_s"], dtype=float) for r in rows])
    out["latency_pooled_p50_s"] = float(np.percentile(lat, 50)) if len(lat) else float("nan")
    out["latency_pooled_p95_s"] = float(np.percentile(lat, 95)) if len(lat) else float("nan")
    out["latencies_s"] = lat.tolist()
    by_link: dict[str, float] = {}
    for r in rows:
        for k, v in r["packets_by_link"].items():
            by_link[k] = by_link.get(k, 0.0) + v
    out["packets_per_item_by_link"] = {
        k: _per_item(v, out["delivered"]) for k, v in sorted(by_link.items())}
    out["packets_per_transaction_by_link"] = {
        k: _per_item(v, out["items"]) for k, v in sorted(by_link.items())}
    return out
