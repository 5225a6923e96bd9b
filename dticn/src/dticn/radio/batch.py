"""The batched engine: GTS traffic in closed form, per node, with numpy.

Frames in guaranteed slots cannot collide (each GTS cell is one node's, one channel per
cell, and GTS never overlap the beacon slot or the CAP), so a node's uplink is a queue
served once per own slot, independent of every other node. For node ``i`` with one
uplink GTS at offset ``o`` (period ``P`` = one multisuperframe):

1. Item ``k`` generated at ``a_k`` can first go in slot index
   ``s_k = ceil((a_k + t_wakeup - o) / P)`` (the node wakes ``t_wakeup`` before the slot).
2. Each attempt uses one slot; after a frame of airtime ``T`` the sub-band stays silent
   for ``T/dc``, so consecutive transmissions are ``d = max(1, ceil(T / (dc P)))`` slots
   apart. Item ``k`` needs ``n_k`` attempts (1 on a clean link; with fading, drawn from
   the per-attempt data and ACK reception probabilities, at most macMaxFrameRetries + 1).
3. FIFO service (Lindley): ``M_k = max(s_k, M_{k-1}) + n_k d`` where ``M_k - d`` is the
   slot of item k's last attempt; with ``C_k = sum_{j<=k} n_j d`` this is
   ``M_k = C_k + max_{j<=k}(s_j - C_{j-1})``, a cumulative maximum: no Python loop.
4. Energy: the closed-form upkeep of :mod:`dticn.radio.upkeep_closed_form` plus, per attempt,
   wake-up, TX for ``T``, then RX for the ACK (turnaround + ACK airtime) or its timeout.

It reproduces the event engine exactly on a clean link (tested) and is used for
GTS-only synthetic traffic with static association ("engine=auto" picks it then).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from dticn.energy.model import EnergyMeter
from dticn.mac.gts import Direction
from dticn.phy.radio_states import RadioState
from dticn.radio.context import RadioContext, build_context
from dticn.radio.radio_items import node_arrivals
from dticn.radio.results import NodeResult, RadioResult
from dticn.radio.scenario import Scenario
from dticn.radio.topology import GATEWAY
from dticn.radio.upkeep_closed_form import book_upkeep, node_activity, reception_probability


def batch_supported(s: Scenario, ctx: RadioContext) -> str | None:
    """None when the batched engine applies; else the reason it does not."""
    if s.slot != "gts":
        return "traffic goes to the CAP (contention needs the event engine)"
    if s.association != "static":
        return "association by handshake runs in the CAP"
    if ctx.node_duty_rule != "off-time":
        return "the nodes keep an hourly duty-cycle budget (the closed form has off-times)"
    for i in range(1, s.nodes + 1):
        if len(ctx.table.of(i, Direction.UP)) != 1:
            return f"node {i} has {len(ctx.table.of(i, Direction.UP))} uplink GTS (needs 1)"
    return None


def _attempts(n_items: int, p_up: float, p_down: float, retries: int,
              rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Attempts per item, index of the first attempt that got through, ACKed flag."""
    if p_up >= 1.0 and p_down >= 1.0:
        ones = np.ones(n_items, dtype=np.int64)
        return ones, np.zeros(n_items, dtype=np.int64), np.ones(n_items, dtype=bool)
    tries = retries + 1
    data_ok = rng.random((n_items, tries)) < p_up
    ack_ok = data_ok & (rng.random((n_items, tries)) < p_down)
    acked = ack_ok.any(axis=1)
    n = np.where(acked, ack_ok.argmax(axis=1) + 1, tries)
    got = data_ok.any(axis=1)
    first_ok = np.where(got, data_ok.argmax(axis=1), -1)
    return n.astype(np.int64), first_ok.astype(np.int64), acked


def run_batch(s: Scenario, ctx: RadioContext | None = None,
              progress: Callable[[float], Any] | None = None) -> RadioResult:
    """Run ``s`` with the batched engine (see the module docstring for the method)."""
    wall = time.perf_counter()
    ctx = ctx if ctx is not None else build_context(s)
    reason = batch_supported(s, ctx)
    if reason is not None:
        raise ValueError(f"the batched engine does not apply: {reason}; use engine='events'")
    cfg, timing = ctx.mac, ctx.mac.timing
    horizon = s.duration_s
    period = timing.multisuperframe_s
    toa, ack = ctx.data_toa_s, ctx.ack_toa_s
    retries = cfg.csma.max_frame_retries
    nodes: list[NodeResult] = []
    gw_airtime = 0.0
    gw_acks = 0
    frames = 0
    for i in range(1, s.nodes + 1):
        cell = ctx.table.of(i, Direction.UP)[0]
        offset = cell.offset(timing)
        dc = ctx.plan.subband(cell.channel).duty_cycle
        stride = max(1, math.ceil(toa / (dc * period) - 1e-9)) if s.enforce_duty_cycle else 1
        a = node_arrivals(s, i)
        margin = ctx.margin_db(i)
        p = reception_probability(margin, s.fading_sigma_db)
        rng = np.random.default_rng([s.seed, 55555, i])
        n, first_ok, acked = _attempts(len(a), p, p, retries, rng)
        first_slot = np.maximum(np.ceil((a + cfg.wakeup_s - offset) / period - 1e-9), 0)
        first_slot = first_slot.astype(np.int64)
        cost = n * stride
        c = np.cumsum(cost)
        m = c + np.maximum.accumulate(first_slot - (c - cost))
        last = m - stride
        first = last - (n - 1) * stride
        start_t = offset + first * period
        # Attempts that started before the horizon (the rest have not happened yet).
        done_attempts = np.clip(np.floor((horizon - start_t) / (stride * period)) + 1, 0, n)
        done_attempts = done_attempts.astype(np.int64)
        rx_t = offset + (first + first_ok * stride) * period + toa
        delivered = (first_ok >= 0) & (rx_t <= horizon)
        finished = done_attempts == n
        failed = finished & ~acked
        pending = ~finished
        attempts_total = int(done_attempts.sum())
        ok_attempts = int((finished & acked).sum())
        fail_attempts = attempts_total - ok_attempts
        meter = EnergyMeter(since=0.0, tx_power_dbm=s.tx_power_dbm)
        counts = book_upkeep(meter, cfg, start=0.0, end=horizon, beacon_toa_s=ctx.beacon_toa_s,
                             downlink=ctx.table.of(i, Direction.DOWN), beacon_loss_prob=1.0 - p)
        meter.add(RadioState.STANDBY, attempts_total * cfg.wakeup_s,
                  count_wakeups=attempts_total)
        meter.add(RadioState.TX, attempts_total * toa)
        meter.add(RadioState.RX, ok_attempts * (cfg.turnaround_s + ack)
                  + fail_attempts * (2 * cfg.turnaround_s + ack))
        airtime = attempts_total * toa
        res = NodeResult(
            i, generated=len(a), delivered=int(delivered.sum()), failed=int(failed.sum()),
            pending=int(pending.sum()), tx_frames=attempts_total,
            retries=int(np.maximum(done_attempts - 1, 0).sum()), collisions=0,
            airtime_s=airtime,
            duty_by_subband={ctx.plan.subband(cell.channel).name: airtime / horizon},
            energy=ctx.energy_profile.report(meter, node_activity(
                cfg, start=0.0, end=horizon, uplink=[cell],
                downlink=ctx.table.of(i, Direction.DOWN), gts_tx=attempts_total)),
            latencies_s=(rx_t - a)[delivered], margin_db=margin,
            lost_beacons=counts["lost_beacons"], sync_losses=counts["sync_losses"])
        nodes.append(res)
        frames += attempts_total
        acks = int((delivered & acked).sum())
        gw_acks += acks
        gw_airtime += acks * ack
        if progress is not None and (i % max(1, s.nodes // 50) == 0 or i == s.nodes):
            progress(i / s.nodes)
    beacons = timing.count_periodic(0.0, timing.beacon_interval_s, 0.0, horizon)
    gw_airtime += beacons * ctx.beacon_toa_s
    band = ctx.plan.subband(cfg.beacon_channel).name
    duty = gw_airtime / horizon
    gateway = {"beacons": beacons, "acks": gw_acks, "duty_cycle_by_subband": {band: duty},
               "duty_cycle_exceeded": [band] if duty > ctx.plan.subband(0).duty_cycle else [],
               "address": GATEWAY}
    return RadioResult(s, "batch", nodes, gateway, time.perf_counter() - wall, 0, frames)
