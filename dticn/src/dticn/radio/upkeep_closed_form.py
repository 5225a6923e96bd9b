"""Closed-form accounting of periodic MAC upkeep per node.

A tracking node wakes for every beacon (radio start-up, then RX from ``guard`` before the
beacon to its end) and for each of its downlink GTS (start-up, RX window); with
``cap_rx`` it also listens through every CAP. These are counted with
:meth:`~dticn.mac.timing.DsmeTiming.count_periodic` and booked in one call each, so a year
of beacons costs as much as an hour. The event-by-event path (``upkeep="events"``) runs
the same activity through the radio state machine; tests check the two agree within 1%.
"""

from __future__ import annotations

import math

from dticn.energy.model import EnergyMeter
from dticn.energy.profiles import Activity
from dticn.mac.dsme_config import MacConfig
from dticn.mac.gts import Gts
from dticn.phy.radio_states import RadioState


def book_upkeep(meter: EnergyMeter, cfg: MacConfig, *, start: float, end: float,
                beacon_toa_s: float, downlink: list[Gts], beacon_loss_prob: float = 0.0,
                cap_busy_s: float = 0.0) -> dict[str, float]:
    """Add the upkeep of a node tracking from ``start`` to ``end``; returns the counts.

    ``cap_busy_s``: with ``cap_rx``, CAP time already booked live by the node's own CAP
    transactions (CCA, TX, ACK wait), which is not listening time.
    """
    timing = cfg.timing
    lead = cfg.beacon_guard_s + cfg.wakeup_s
    beacons = timing.count_periodic(0.0, timing.beacon_interval_s, start + lead, end + lead)
    lost = beacons * beacon_loss_prob
    rx = beacons * (cfg.beacon_guard_s + beacon_toa_s) + lost * cfg.beacon_guard_s
    standby = beacons * cfg.wakeup_s
    wakeups = beacons
    slots = 0
    for cell in downlink:
        n = timing.count_periodic(cell.offset(timing), timing.multisuperframe_s,
                                  start + cfg.wakeup_s, end + cfg.wakeup_s)
        slots += n
        rx += n * cfg.gts_rx_window_s
        standby += n * cfg.wakeup_s
        wakeups += n
    caps = 0
    if cfg.cap_rx:
        caps = timing.count_periodic(timing.slot_s, timing.superframe_s, start, end)
        # Minus the CAP time the node's own transactions held the radio (booked live).
        rx += max(caps * timing.cap_slots * timing.slot_s - cap_busy_s, 0.0)
        standby += caps * cfg.wakeup_s
        wakeups += caps
    # Sync loss: macMaxLostBeacons misses in a row after a received beacon; the node then
    # scans (receiver on) until a beacon gets through, about BI / p_received later.
    q = beacon_loss_prob
    k = cfg.max_lost_beacons
    sync_losses = beacons * (1.0 - q) * q**k if 0.0 < q < 1.0 else 0.0
    if sync_losses:
        rx += sync_losses * max(timing.beacon_interval_s / (1.0 - q) - cfg.beacon_guard_s, 0.0)
    meter.add(RadioState.RX, rx, count_wakeups=round(wakeups))
    meter.add(RadioState.STANDBY, standby)
    return {"beacons": beacons, "lost_beacons": lost, "downlink_slots": slots, "caps": caps,
            "sync_losses": sync_losses}


def node_activity(cfg: MacConfig, *, start: float, end: float, uplink: list[Gts],
                  downlink: list[Gts], gts_tx: int = 0, cap_tx: int = 0,
                  rx_frames: int = 0) -> Activity:
    """A node's :class:`~dticn.energy.profiles.Activity` over ``[0, end]``: the periodic
    part (beacons, superframes, GTS occurrences while tracking from ``start``) in closed
    form, the frames as counted by the engine."""
    timing = cfg.timing
    start = min(start, end)

    def occurrences(cells: list[Gts]) -> int:
        return sum(timing.count_periodic(c.offset(timing), timing.multisuperframe_s, start, end)
                   for c in cells)

    return Activity(
        horizon_s=end, tracking_s=end - start,
        beacons=timing.count_periodic(0.0, timing.beacon_interval_s, start, end),
        superframes=timing.count_periodic(0.0, timing.superframe_s, start, end),
        tx_gts_slots=occurrences(uplink), rx_gts_slots=occurrences(downlink),
        gts_tx=gts_tx, cap_tx=cap_tx, rx_frames=rx_frames, cap_rx=cfg.cap_rx)


def reception_probability(margin_db: float, fading_sigma_db: float) -> float:
    """P(RSSI >= sensitivity) with Gaussian fading of ``fading_sigma_db`` around the margin."""
    if fading_sigma_db <= 0:
        return 1.0 if margin_db >= 0 else 0.0
    return 0.5 * math.erfc(-margin_db / (fading_sigma_db * math.sqrt(2.0)))
