"""Results of a radio run: per node and for the whole edge (JSON-ready)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dticn.energy.model import EnergyReport
from dticn.radio.scenario import Scenario


@dataclass
class NodeResult:
    """What one node did over the horizon."""

    node: int
    generated: int = 0
    delivered: int = 0
    failed: int = 0
    pending: int = 0
    tx_frames: int = 0
    retries: int = 0
    collisions: int = 0
    airtime_s: float = 0.0
    duty_by_subband: dict[str, float] = field(default_factory=dict)
    energy: EnergyReport | None = None
    latencies_s: np.ndarray = field(default_factory=lambda: np.zeros(0))
    margin_db: float = 0.0
    lost_beacons: float = 0.0
    sync_losses: float = 0.0
    queue_drops: int = 0

    @property
    def delivery_ratio(self) -> float:
        return self.delivered / self.generated if self.generated else float("nan")

    @property
    def duty_cycle(self) -> float:
        return max(self.duty_by_subband.values(), default=0.0)

    def as_dict(self) -> dict[str, Any]:
        lat = self.latencies_s
        return {
            "node": self.node, "generated": self.generated, "delivered": self.delivered,
            "failed": self.failed, "pending": self.pending,
            "delivery_ratio": self.delivery_ratio, "tx_frames": self.tx_frames,
            "retries": self.retries, "collisions": self.collisions,
            "airtime_s": self.airtime_s, "duty_cycle": self.duty_cycle,
            "duty_cycle_by_subband": self.duty_by_subband,
            "latency_s": _percentiles(lat), "margin_db": self.margin_db,
            "lost_beacons": self.lost_beacons, "sync_losses": self.sync_losses,
            "queue_drops": self.queue_drops,
            "energy": self.energy.as_dict() if self.energy else None,
        }


def _percentiles(values: np.ndarray) -> dict[str, float]:
    if len(values) == 0:
        return {"p50": float("nan"), "p90": float("nan"), "p99": float("nan"),
                "max": float("nan"), "mean": float("nan")}
    p50, p90, p99 = np.percentile(values, [50, 90, 99])
    return {"p50": float(p50), "p90": float(p90), "p99": float(p99),
            "max": float(values.max()), "mean": float(values.mean())}


@dataclass
class RadioResult:
    scenario: Scenario
    engine: str
    nodes: list[NodeResult]
    gateway: dict[str, Any]
    wall_s: float = 0.0
    events: int = 0
    frames: int = 0

    def summary(self) -> dict[str, Any]:
        generated = sum(n.generated for n in self.nodes)
        delivered = sum(n.delivered for n in self.nodes)
        lat = np.concatenate([n.latencies_s for n in self.nodes]) if self.nodes else np.zeros(0)
        energies = [n.energy for n in self.nodes if n.energy is not None]
        sim_s = self.scenario.duration_s
        return {
            "nodes": len(self.nodes), "generated": generated, "delivered": delivered,
            "delivery_ratio": delivered / generated if generated else float("nan"),
            "latency_s": _percentiles(lat),
            "collisions": sum(n.collisions for n in self.nodes),
            "retries": sum(n.retries for n in self.nodes),
            "queue_drops": sum(n.queue_drops for n in self.nodes),
            "cap_plan": self.scenario.cap_plan,
            "tx_frames": sum(n.tx_frames for n in self.nodes),
            "airtime_s": sum(n.airtime_s for n in self.nodes),
            "max_duty_cycle": max((n.duty_cycle for n in self.nodes), default=0.0),
            "energy_per_day_J_mean": float(np.mean([e.energy_per_day_j for e in energies]))
            if energies else float("nan"),
            "avg_current_mA_mean": float(np.mean([e.avg_current_ma for e in energies]))
            if energies else float("nan"),
            "lifetime_days_min": min((e.lifetime_days for e in energies), default=float("nan")),
            "lifetime_days_mean": float(np.mean([e.lifetime_days for e in energies]))
            if energies else float("nan"),
            "power_mw_mean": float(np.mean([e.power_mw for e in energies]))
            if energies else float("nan"),
            "energy_profile": self.scenario.energy_profile,
            "engine": self.engine, "upkeep": self.scenario.upkeep, "wall_s": self.wall_s,
            "events": self.events, "frames": self.frames,
            "sim_s_per_wall_s": sim_s / self.wall_s if self.wall_s > 0 else float("inf"),
        }

    def as_dict(self) -> dict[str, Any]:
        return {"scenario": self.scenario.as_dict(), "summary": self.summary(),
                "gateway": self.gateway, "nodes": [n.as_dict() for n in self.nodes]}
