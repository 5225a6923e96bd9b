"""Charge and energy per node from the time spent in each radio state.

Average current = sum(current_state x time_state) / horizon, with the MCU's sleep or
active current added (the MCU is active while the radio is awake and for a fixed
overhead per wake-up). Lifetime = battery capacity / average current. Sleep time is the
remainder of the horizon, so closed-form accounting can add awake time without ever
touching the (dominant) sleep intervals.
"""

from __future__ import annotations

import itertools
import tomllib
from collections import defaultdict
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from dticn.phy.radio_states import RadioState

#: Radio states whose time is tracked (sleep is the remainder).
AWAKE_STATES = (RadioState.STANDBY, RadioState.CAD, RadioState.RX, RadioState.TX)


@dataclass(frozen=True)
class EnergyConfig:
    """Currents (mA) and battery of one node; see ``sx1276.toml`` for the sources."""

    radio_ma: dict[str, float]
    tx_ma: dict[float, float]
    mcu_sleep_ma: float
    mcu_active_ma: float
    mcu_wakeup_overhead_s: float
    supply_v: float
    battery_mah: float

    @classmethod
    def load(cls, path: str | Path | None = None, **overrides: Any) -> EnergyConfig:
        """Read ``sx1276.toml`` (packaged default) or another file of the same shape."""
        if path is None:
            text = resources.files("dticn.energy").joinpath("sx1276.toml").read_text("utf-8")
        else:
            text = Path(path).read_text(encoding="utf-8")
        cfg = tomllib.loads(text)
        values: dict[str, Any] = {
            "radio_ma": {k: float(v) for k, v in cfg["radio_ma"].items()},
            "tx_ma": {float(k): float(v) for k, v in cfg["tx_ma"].items()},
            "mcu_sleep_ma": float(cfg["mcu_ma"]["sleep"]),
            "mcu_active_ma": float(cfg["mcu_ma"]["active"]),
            "mcu_wakeup_overhead_s": float(cfg["mcu_ma"]["wakeup_overhead_s"]),
            "supply_v": float(cfg["supply_v"]),
            "battery_mah": float(cfg["battery"]["capacity_mah"]),
        }
        values.update(overrides)
        return cls(**values)

    def tx_current_ma(self, power_dbm: float) -> float:
        """Current at ``power_dbm``: a configured level, else linear between neighbours."""
        levels = sorted(self.tx_ma)
        if power_dbm in self.tx_ma:
            return self.tx_ma[power_dbm]
        if not levels[0] <= power_dbm <= levels[-1]:
            raise ValueError(
                f"no transmit current for {power_dbm} dBm; the config covers "
                f"{levels[0]}..{levels[-1]} dBm: add the level to [tx_ma]"
            )
        for low, high in itertools.pairwise(levels):
            if low <= power_dbm <= high:
                frac = (power_dbm - low) / (high - low)
                return self.tx_ma[low] + frac * (self.tx_ma[high] - self.tx_ma[low])
        raise AssertionError("unreachable")  # pragma: no cover


@dataclass
class EnergyReport:
    """Per-node result: time and charge per state, energy, average current, lifetime."""

    horizon_s: float
    time_s: dict[str, float]
    charge_mas: dict[str, float]
    wakeups: int

    supply_v: float = 3.3
    battery_mah: float = 2600.0
    profile: str = "optimised"
    events: dict[str, Any] | None = None

    @property
    def charge_total_mas(self) -> float:
        return sum(self.charge_mas.values())

    @property
    def avg_current_ma(self) -> float:
        return self.charge_total_mas / self.horizon_s if self.horizon_s > 0 else 0.0

    @property
    def power_mw(self) -> float:
        """Mean power drawn from the battery."""
        return self.avg_current_ma * self.supply_v

    @property
    def energy_per_day_j(self) -> float:
        return self.avg_current_ma * 1e-3 * self.supply_v * 86_400.0

    @property
    def lifetime_days(self) -> float:
        if self.avg_current_ma <= 0:
            return float("inf")
        return self.battery_mah / self.avg_current_ma / 24.0

    def energy_per_day_by_state_j(self) -> dict[str, float]:
        scale = 1e-3 * self.supply_v * 86_400.0 / self.horizon_s if self.horizon_s else 0.0
        return {k: v * scale for k, v in self.charge_mas.items()}

    def as_dict(self) -> dict[str, Any]:
        out = {
            "profile": self.profile, "power_mW": self.power_mw,
            "time_s": dict(self.time_s), "charge_mAs": dict(self.charge_mas),
            "wakeups": self.wakeups, "avg_current_mA": self.avg_current_ma,
            "energy_per_day_J": self.energy_per_day_j, "lifetime_days": self.lifetime_days,
            "energy_per_day_by_state_J": self.energy_per_day_by_state_j(),
        }
        if self.events is not None:
            out["events"] = dict(self.events)
        return out


@dataclass
class EnergyMeter:
    """Accumulates awake time per radio state (TX per power level) and wake-ups.

    Two ways in: :meth:`transition` follows a live radio (event-by-event path), and
    :meth:`add` books closed-form time (periodic upkeep, batched frames).
    """

    state: RadioState = RadioState.SLEEP
    since: float = 0.0
    tx_power_dbm: float = 14.0
    time_s: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    tx_time_s: dict[float, float] = field(default_factory=lambda: defaultdict(float))
    wakeups: int = 0

    def transition(self, state: RadioState, now: float, tx_power_dbm: float | None = None
                   ) -> None:
        """Close the current state's interval at ``now`` and enter ``state``."""
        self._close(now)
        if self.state is RadioState.SLEEP and state is not RadioState.SLEEP:
            self.wakeups += 1
        self.state = state
        if tx_power_dbm is not None:
            self.tx_power_dbm = tx_power_dbm

    def _close(self, now: float) -> None:
        elapsed = now - self.since
        if elapsed < 0:
            raise ValueError(f"energy meter went back in time ({now} < {self.since})")
        if self.state is RadioState.TX:
            self.tx_time_s[self.tx_power_dbm] += elapsed
        elif self.state is not RadioState.SLEEP:
            self.time_s[self.state.value] += elapsed
        self.since = now

    def copy(self) -> EnergyMeter:
        """An independent meter with the same books (to add closed-form time to a snapshot)."""
        return EnergyMeter(self.state, self.since, self.tx_power_dbm,
                           defaultdict(float, self.time_s), defaultdict(float, self.tx_time_s),
                           self.wakeups)

    def add(self, state: RadioState, seconds: float, *, count_wakeups: int = 0,
            tx_power_dbm: float | None = None) -> None:
        """Book ``seconds`` in ``state`` without a live transition (closed form)."""
        if state is RadioState.TX:
            self.tx_time_s[self.tx_power_dbm if tx_power_dbm is None else tx_power_dbm] += seconds
        elif state is not RadioState.SLEEP:
            self.time_s[state.value] += seconds
        self.wakeups += count_wakeups

    def report(self, config: EnergyConfig, horizon_s: float, now: float | None = None
               ) -> EnergyReport:
        """Time and charge per state over ``[0, horizon_s]`` (sleep is the remainder)."""
        if now is not None:
            self._close(now)
        time_s = {k: v for k, v in self.time_s.items() if v}
        for power, t in self.tx_time_s.items():
            if t:
                time_s[f"tx@{power:g}dBm"] = t
        awake = sum(time_s.values())
        time_s["sleep"] = max(horizon_s - awake, 0.0)
        charge = {}
        for name, t in time_s.items():
            if name.startswith("tx@"):
                current = config.tx_current_ma(float(name[3:-3]))
            else:
                current = config.radio_ma[name]
            charge[name] = current * t
        mcu_active = min(awake + self.wakeups * config.mcu_wakeup_overhead_s, horizon_s)
        time_s["mcu_active"] = mcu_active
        time_s["mcu_sleep"] = horizon_s - mcu_active
        charge["mcu_active"] = config.mcu_active_ma * mcu_active
        charge["mcu_sleep"] = config.mcu_sleep_ma * (horizon_s - mcu_active)
        return EnergyReport(horizon_s, time_s, charge, self.wakeups, config.supply_v,
                            config.battery_mah)
