"""Whether a DSME schedule (or a LoRaWAN device's duty cycle) can carry the load offered
to it, and by how much it cannot.

With static association every node holds one uplink GTS per multisuperframe, so at most
one frame per node leaves per multisuperframe; a node offering items faster builds a queue
that only grows (DSME-LoRa's GTS queue model, arXiv 2206.14077 Section 6, is stable only
for utilisation below 1). A run of such a configuration still ends and prints a delivery
ratio, which reads like a radio problem: :func:`gts_overload` says in one line that it is a
schedule problem, the factor, the most that can be delivered, and what to change.

LoRaWAN has no schedule, but an EU868 device may transmit only its sub-bands' duty cycle
(1% on g1, where the three default channels lie: ETSI EN 300 220; LoRaWAN regional
parameters): :func:`duty_overload` says when the items' time on air exceeds it.
"""

from __future__ import annotations

from dataclasses import dataclass

from dticn.radio.scenario import Scenario

GTS_PER_MULTISUPERFRAME = 1
"""Uplink GTS a node holds per multisuperframe under static association
(:func:`dticn.radio.context.smallest_mo_that_fits` lays out exactly one)."""


@dataclass(frozen=True)
class Overload:
    """Offered items per node against what the node's GTS carry."""

    interval_s: float
    """Mean seconds between a node's items."""
    gts_every_s: float
    """Seconds between a node's uplink GTS (one multisuperframe)."""

    @property
    def factor(self) -> float:
        """Offered over carried (above 1: the queue grows without bound)."""
        return self.gts_every_s / self.interval_s

    @property
    def deliverable(self) -> float:
        """The most of the offered items the schedule can deliver (1.0 when it keeps up)."""
        return min(1.0, 1.0 / self.factor)

    def line(self, what: str = "configuration") -> str:
        """The one line a command prints."""
        return (f"this {what} offers more than its schedule carries: each node offers an "
                f"item every {self.interval_s:,.0f} s but has one uplink GTS every "
                f"{self.gts_every_s:,.0f} s ({self.factor:.1f}x its capacity), so at most "
                f"{100 * self.deliverable:.0f}% of the items can be delivered; use fewer "
                "nodes per gateway, more receive chains (--rx-chains 8), a smaller MO or "
                "slower traffic")


def gts_overload(scenario: Scenario, interval_s: float, multisuperframe_s: float
                 ) -> Overload | None:
    """The overload of ``scenario``'s uplink GTS at one item per ``interval_s`` per node,
    or ``None`` when the schedule keeps up (or the traffic goes through the CAP, which has
    no fixed capacity)."""
    if scenario.slot != "gts" or interval_s <= 0:
        return None
    load = Overload(interval_s, multisuperframe_s / GTS_PER_MULTISUPERFRAME)
    return load if load.factor > 1.0 else None


@dataclass(frozen=True)
class DutyOverload:
    """Offered airtime per node against what its uplink sub-bands' duty cycles allow."""

    interval_s: float
    """Mean seconds between a node's items."""
    airtime_s: float
    """Time on air of one item's uplink."""
    allowed_share: float
    """Share of time the node may transmit (sum of its uplink sub-bands' limits)."""
    frames: str = "items"
    """What the uplinks are (items, or the keep-alives a reachable class A node sends)."""
    remedy: str = "slower traffic"
    """The last of the changes the line suggests."""

    @property
    def factor(self) -> float:
        """Offered airtime over allowed airtime (above 1: the queue grows without bound)."""
        return self.airtime_s / self.interval_s / self.allowed_share

    @property
    def deliverable(self) -> float:
        """The most of the offered items the duty cycle lets out (1.0 when it keeps up)."""
        return min(1.0, 1.0 / self.factor)

    def line(self, what: str = "configuration") -> str:
        """The one line a command prints."""
        return (f"this {what} offers more airtime than the duty cycle allows: each node sends "
                f"{self.airtime_s:.2f} s on air every {self.interval_s:,.0f} s "
                f"({100 * self.airtime_s / self.interval_s:.2f}% of the time) where its "
                f"uplink sub-bands allow {100 * self.allowed_share:.1f}% "
                f"({self.factor:.1f}x), so at most {100 * self.deliverable:.0f}% of the "
                f"{self.frames} can go out; use a lower SF, more channels (--channels 8) or "
                f"{self.remedy}")


def duty_overload(scenario: Scenario, interval_s: float, payload_bytes: int | None = None,
                  **wording: str) -> DutyOverload | None:
    """The duty-cycle overload of a LoRaWAN ``scenario`` at one uplink per ``interval_s``
    per node (first transmissions only; retransmissions make it worse), or ``None`` when
    the duty cycle keeps up or is not enforced. ``payload_bytes``: the uplink's application
    payload (default the scenario's item; 0 for an empty keep-alive); ``wording``: the
    line's ``frames`` and ``remedy`` (:class:`DutyOverload`)."""
    if not scenario.enforce_duty_cycle or interval_s <= 0:
        return None
    from dticn.phy.airtime import time_on_air
    from dticn.radio.lorawan_network import build_lorawan_context

    ctx = build_lorawan_context(scenario)
    payload = scenario.payload_bytes if payload_bytes is None else payload_bytes
    toa = time_on_air(ctx.phy, payload + ctx.config.frame_overhead_bytes)
    bands = {ctx.plan.subband(ch).name: ctx.plan.subband(ch).duty_cycle
             for ch in range(ctx.uplink_channels)}
    load = DutyOverload(interval_s, toa, sum(bands.values()), **wording)
    return load if load.factor > 1.0 else None
