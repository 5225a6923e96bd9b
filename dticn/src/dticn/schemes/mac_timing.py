"""When the MAC below the gateway can carry a request to a node and bring the reply back:
what the RICE-like schemes read for their wait hints, for DSME and for LoRaWAN class A and B.

A scheme never reads a MAC's internals; it asks a :class:`MacTiming`:

* ``period_s``: the MAC's natural cycle (DSME: one multisuperframe, the time between a
  node's GTS; LoRaWAN class A: the node's reporting period, the time between the uplinks
  that open its receive windows). The static RICE hint is one period.
* ``reply_eta(node, interest_bytes, now)``: when the reply to an Interest of that size,
  sent now, should be at the gateway (the schedule-aware hint).
* ``late_eta(node, now)``: the same for a reply already overdue (the request has left).
* ``backlog_s(node)``: how long the frames already queued for the node delay a new one
  (the gateway's own request must outlive them).

Both estimate the reply as a full frame (its size is unknown in advance: an upper bound
on its airtime).
"""

from __future__ import annotations

import math
from typing import Protocol

from dticn.mac.coordinator import DsmeCoordinator
from dticn.mac.gts import Direction
from dticn.mac.lorawan import LorawanGateway, class_b_uplink_start, next_ping_slot
from dticn.phy.airtime import time_on_air

LP_HEADER_BYTES = 10
"""NDNLPv2 framing around an Interest on the LoRa face (sequence, fragment fields)."""


class MacTiming(Protocol):
    """What a gateway scheme may ask of the MAC's timing (module docstring)."""

    @property
    def period_s(self) -> float: ...
    def downlink_backlog(self, node: int) -> int: ...
    def backlog_s(self, node: int) -> float: ...
    def reply_eta(self, node: int, interest_bytes: int, now: float) -> float: ...
    def late_eta(self, node: int, now: float) -> float: ...


class DsmeTiming:
    """The DSME schedule: a request waits for the node's next downlink GTS (after the
    frames queued for it, one per multisuperframe), the reply for the node's next uplink
    GTS after that frame and its ACK."""

    def __init__(self, coordinator: DsmeCoordinator) -> None:
        self.coordinator = coordinator

    @property
    def period_s(self) -> float:
        return self.coordinator.cfg.timing.multisuperframe_s

    def next_slot(self, node: int, direction: Direction, after: float) -> float:
        """Start of ``node``'s next GTS in ``direction`` at or after ``after``."""
        when = self.coordinator.next_slot_time(node, direction, after)
        if when is None:
            raise ValueError(f"node {node} has no {direction} GTS; allocate one in the scenario")
        return when

    def airtime(self, payload_bytes: int) -> float:
        """LoRa time on air of a MAC data frame carrying ``payload_bytes``."""
        coord = self.coordinator
        return time_on_air(coord.p.phy, payload_bytes + coord.cfg.data_overhead)

    def downlink_backlog(self, node: int) -> int:
        return len(self.coordinator.downlink_queues.get(node, ()))

    def backlog_s(self, node: int) -> float:
        return self.downlink_backlog(node) * self.period_s

    def late_eta(self, node: int, now: float) -> float:
        return self.next_slot(node, Direction.UP, now) + self.airtime(
            self.coordinator.max_payload)

    def reply_eta(self, node: int, interest_bytes: int, now: float) -> float:
        cfg = self.coordinator.cfg
        down = self.next_slot(node, Direction.DOWN, now + cfg.turnaround_s)
        down += self.backlog_s(node)
        down_done = (down + cfg.turnaround_s + self.airtime(interest_bytes + LP_HEADER_BYTES)
                     + 2 * cfg.turnaround_s + self.coordinator.ack_s)
        up = self.next_slot(node, Direction.UP, down_done + cfg.wakeup_s)
        return up + self.airtime(self.coordinator.max_payload)


class LorawanTiming:
    """LoRaWAN class A: a request waits for the node's next uplink (its last one plus the
    reporting period), goes down in RX1 ``receive_delay1`` after that uplink's end, one frame
    per window (FPending makes the node send an empty uplink at once for the next); the
    node answers with an uplink as soon as the window closes.

    ``report_s``: the node's reporting (keep-alive) period; before the gateway has heard a
    node, its next uplink is assumed one period away.
    """

    def __init__(self, gateway: LorawanGateway, report_s: float) -> None:
        if report_s <= 0:
            raise ValueError(f"report_s={report_s}: give a positive reporting period")
        self.gateway = gateway
        self.report_s = report_s

    @property
    def period_s(self) -> float:
        return self.report_s

    def _uplink_s(self, payload_bytes: int) -> float:
        gw = self.gateway
        return time_on_air(gw.phy, payload_bytes + gw.cfg.frame_overhead_bytes)

    def _cycle_s(self) -> float:
        """One downlink frame with FPending, then the empty uplink that asks for the next."""
        gw = self.gateway
        return (gw.cfg.receive_delay1_s + gw.downlink_airtime(gw.max_payload)
                + self._uplink_s(0))

    def next_uplink_end(self, node: int, now: float) -> float:
        """When ``node``'s next uplink should end, from its last one and the period."""
        last = self.gateway.last_uplink_end.get(node)
        if last is None:
            return now + self.report_s
        periods = max(math.ceil((now - last) / self.report_s), 1)
        return last + periods * self.report_s

    def downlink_backlog(self, node: int) -> int:
        return len(self.gateway.downlink_queues.get(node, ()))

    def backlog_s(self, node: int) -> float:
        return self.downlink_backlog(node) * self._cycle_s()

    def late_eta(self, node: int, now: float) -> float:
        return self.next_uplink_end(node, now) + self._uplink_s(self.gateway.max_payload)

    def reply_eta(self, node: int, interest_bytes: int, now: float) -> float:
        gw = self.gateway
        frames = math.ceil((interest_bytes + LP_HEADER_BYTES) / gw.max_payload)
        last_down = (self.next_uplink_end(node, now) + self.backlog_s(node)
                     + (frames - 1) * self._cycle_s() + gw.cfg.receive_delay1_s
                     + gw.downlink_airtime(min(interest_bytes + LP_HEADER_BYTES,
                                               gw.max_payload)))
        return last_down + self._uplink_s(gw.max_payload)


class ClassBTiming(LorawanTiming):
    """LoRaWAN class B: a request goes down in the node's next ping slot (after one ping
    period per frame queued ahead of it), the reply comes up as soon as the slot closes and
    the beacon guard allows. Class A windows after the node's own uplinks may carry it
    sooner; the hint does not count on them."""

    def __init__(self, gateway: LorawanGateway) -> None:
        super().__init__(gateway, gateway.cfg.ping_period_s())

    def backlog_s(self, node: int) -> float:
        return self.downlink_backlog(node) * self.period_s

    def late_eta(self, node: int, now: float) -> float:
        if self.downlink_backlog(node):        # the request still waits for a ping slot
            return self._after_slot(next_ping_slot(self.gateway.cfg, node, now),
                                    self.gateway.max_payload)
        return (class_b_uplink_start(self.gateway.cfg, now)
                + self._uplink_s(self.gateway.max_payload))

    def reply_eta(self, node: int, interest_bytes: int, now: float) -> float:
        cfg = self.gateway.cfg
        size = interest_bytes + LP_HEADER_BYTES
        frames = math.ceil(size / cfg.max_payload(cfg.ping_sf))
        slot = next_ping_slot(cfg, node, now + self.backlog_s(node)
                              + (frames - 1) * self.period_s)
        return self._after_slot(slot, min(size, cfg.max_payload(cfg.ping_sf)))

    def _after_slot(self, slot: float, down_bytes: int) -> float:
        """The reply's arrival after a request of ``down_bytes`` in the ping slot ``slot``."""
        gw = self.gateway
        cfg = gw.cfg
        down = gw.downlink_airtime(min(down_bytes, cfg.max_payload(cfg.ping_sf)), cfg.ping_sf)
        heard = slot + max(down, cfg.rx_window_s(cfg.ping_sf, gw.phy.bw_hz))
        return class_b_uplink_start(cfg, heard) + self._uplink_s(gw.max_payload)
