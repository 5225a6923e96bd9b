"""EU duty-cycle limits per sub-band: enforcement and reporting.

Rule (as LoRaWAN regional parameters and ETSI EN 300 220-1 section 5.6 allow): after a
transmission of ``T`` seconds in a sub-band with limit ``dc``, the device stays silent in
that sub-band for ``T (1/dc - 1)``. It keeps every device at or below ``dc`` over any
window, which is stricter than the 1-hour average and needs no history.
"""

from __future__ import annotations

from collections import defaultdict

from dticn.phy.channels import ChannelPlan


class DutyCycleTracker:
    """Per-device book of airtime and off-periods, by sub-band."""

    def __init__(self, plan: ChannelPlan, *, enforce: bool = True) -> None:
        self.plan = plan
        self.enforce = enforce
        self._free_at: dict[str, float] = defaultdict(float)
        self.airtime_s: dict[str, float] = defaultdict(float)
        self.deferrals = 0
        self.violations = 0

    def earliest(self, channel: int, now: float) -> float:
        """Earliest time >= now at which a transmission on ``channel`` is allowed."""
        return max(now, self._free_at[self.plan.subband(channel).name])

    def allowed(self, channel: int, now: float) -> bool:
        return not self.enforce or self.earliest(channel, now) <= now + 1e-12

    def record(self, channel: int, start: float, toa_s: float) -> None:
        """Book a transmission; counts a violation when it starts inside an off-period."""
        band = self.plan.subband(channel)
        if start + 1e-12 < self._free_at[band.name]:
            self.violations += 1
        self.airtime_s[band.name] += toa_s
        self._free_at[band.name] = max(self._free_at[band.name],
                                       start + toa_s / band.duty_cycle)

    def duty_cycle(self, horizon_s: float) -> dict[str, float]:
        """Fraction of ``horizon_s`` spent transmitting, per sub-band used."""
        if horizon_s <= 0:
            return {}
        return {name: t / horizon_s for name, t in self.airtime_s.items()}
