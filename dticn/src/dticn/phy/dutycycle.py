"""EU duty-cycle limits per sub-band: enforcement and reporting.

Two rules, by device role:

* ``"off-time"`` (end nodes; as LoRaWAN regional parameters do it): after a transmission
  of ``T`` seconds in a sub-band with limit ``dc``, stay silent there until ``T / dc``
  after its start. It keeps the device at or below ``dc`` over any window and needs no
  history.
* ``"window"`` (the gateway): ETSI EN 300 220-1 (section 4.3.3 / 5.6) measures the duty
  cycle over one hour; a transmission is allowed while the airtime of the last hour is
  below ``dc x 3600 s``. A gateway beaconing every 30.72 s would otherwise never get a
  downlink out within 8 s of a beacon.
"""

from __future__ import annotations

from collections import defaultdict, deque

from dticn.phy.channels import ChannelPlan


class DutyCycleTracker:
    """Per-device book of airtime and off-periods, by sub-band."""

    WINDOW_S = 3600.0

    def __init__(self, plan: ChannelPlan, *, enforce: bool = True, rule: str = "off-time"
                 ) -> None:
        if rule not in ("off-time", "window"):
            raise ValueError(f"duty-cycle rule {rule!r}: use 'off-time' or 'window'")
        self.plan = plan
        self.enforce = enforce
        self.rule = rule
        self._history: dict[str, deque[tuple[float, float]]] = defaultdict(deque)
        self._window_sum: dict[str, float] = defaultdict(float)
        self._free_at: dict[str, float] = defaultdict(float)
        self.airtime_s: dict[str, float] = defaultdict(float)
        self.deferrals = 0
        self.violations = 0

    def _expire(self, band: str, now: float) -> None:
        history = self._history[band]
        while history and history[0][0] < now - self.WINDOW_S:
            self._window_sum[band] -= history.popleft()[1]

    def earliest(self, channel: int, now: float) -> float:
        """Earliest time >= now at which a transmission on ``channel`` is allowed."""
        band = self.plan.subband(channel)
        if self.rule == "off-time":
            return max(now, self._free_at[band.name])
        self._expire(band.name, now)
        limit = band.duty_cycle * self.WINDOW_S
        if self._window_sum[band.name] < limit:
            return now
        total = self._window_sum[band.name]
        for start, toa in self._history[band.name]:
            total -= toa
            if total < limit:
                return start + self.WINDOW_S
        return now  # pragma: no cover

    def allowed(self, channel: int, now: float) -> bool:
        return not self.enforce or self.earliest(channel, now) <= now + 1e-12

    def record(self, channel: int, start: float, toa_s: float) -> None:
        """Book a transmission; counts a violation when it starts inside an off-period."""
        band = self.plan.subband(channel)
        if self.rule == "off-time":
            late = start + 1e-12 < self._free_at[band.name]
        else:
            self._expire(band.name, start)
            late = self._window_sum[band.name] >= band.duty_cycle * self.WINDOW_S
        if late:
            self.violations += 1
        self.airtime_s[band.name] += toa_s
        if self.rule == "window":
            self._history[band.name].append((start, toa_s))
            self._window_sum[band.name] += toa_s
        self._free_at[band.name] = max(self._free_at[band.name],
                                       start + toa_s / band.duty_cycle)

    def duty_cycle(self, horizon_s: float) -> dict[str, float]:
        """Fraction of ``horizon_s`` spent transmitting, per sub-band used."""
        if horizon_s <= 0:
            return {}
        return {name: t / horizon_s for name, t in self.airtime_s.items()}
