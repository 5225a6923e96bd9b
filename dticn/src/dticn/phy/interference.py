"""Who survives an overlap: same-SF capture and (configurable) inter-SF rejection.

Only transmissions on the same channel that overlap in time interfere; frames on other
channels or in other slots never collide. Interferer powers of the same SF are summed
(in mW) before the SIR test, as the ns-3 lorawan module does, so two weak interferers
can together destroy a frame that would survive each alone.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from dticn.phy.config import load_phy_config

_FIRST_SF = 7


@dataclass(frozen=True)
class InterferenceModel:
    """Capture threshold for equal SFs and the SIR matrix (or orthogonality) across SFs."""

    capture_db: float = 6.0
    inter_sf: str = "matrix"
    sir_threshold_db: tuple[tuple[float, ...], ...] = ()

    def __post_init__(self) -> None:
        if self.inter_sf not in ("matrix", "orthogonal"):
            raise ValueError(f"inter_sf={self.inter_sf!r}: use 'matrix' or 'orthogonal'")
        if self.inter_sf == "matrix" and len(self.sir_threshold_db) != 6:
            raise ValueError("inter_sf='matrix' needs a 6x6 SIR table for SF7..SF12")

    @classmethod
    def from_config(cls, config: dict[str, Any] | None = None, **overrides: Any
                    ) -> InterferenceModel:
        cfg = (config if config is not None else load_phy_config())["interference"]
        values = {
            "capture_db": float(cfg["capture_db"]),
            "inter_sf": str(cfg["inter_sf"]),
            "sir_threshold_db": tuple(tuple(float(v) for v in row)
                                      for row in cfg["sir_threshold_db"]),
        }
        values.update(overrides)
        return cls(**values)

    def threshold_db(self, wanted_sf: int, interfering_sf: int) -> float | None:
        """SIR the wanted frame needs against that SF; None when the SFs do not interact."""
        if wanted_sf == interfering_sf:
            return self.capture_db
        if self.inter_sf == "orthogonal":
            return None
        return self.sir_threshold_db[wanted_sf - _FIRST_SF][interfering_sf - _FIRST_SF]

    def survives(self, sf: int, rssi_dbm: float,
                 interferers: Iterable[tuple[int, float]]) -> bool:
        """Whether a frame (``sf``, ``rssi_dbm``) survives the overlapping ``(sf, rssi)`` set."""
        power_mw: dict[int, float] = {}
        for other_sf, other_rssi in interferers:
            power_mw[other_sf] = power_mw.get(other_sf, 0.0) + 10.0 ** (other_rssi / 10.0)
        for other_sf, mw in power_mw.items():
            threshold = self.threshold_db(sf, other_sf)
            if threshold is None:
                continue
            if rssi_dbm - 10.0 * math.log10(mw) < threshold:
                return False
        return True
