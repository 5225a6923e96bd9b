"""Path loss (log-distance with log-normal shadowing) and receiver sensitivity."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dticn.phy.config import load_phy_config


@dataclass(frozen=True)
class LogDistancePathLoss:
    """PL(d) = PL(d0) + 10 n log10(d/d0) + X, X ~ N(0, sigma) per link (slow shadowing).

    The defaults live in ``lora.toml`` with their source (Bor et al. 2016). Below d0 the
    loss stays PL(d0) (the model is fitted beyond it); ``extrapolate_below_d0`` continues
    the line instead, as LoRaSim does (its experiment-0 anchor needs it).
    """

    pl_d0_db: float
    d0_m: float
    exponent: float
    shadowing_sigma_db: float
    extrapolate_below_d0: bool = False

    @classmethod
    def from_config(cls, config: dict[str, Any] | None = None) -> LogDistancePathLoss:
        cfg = (config if config is not None else load_phy_config())["path_loss"]
        return cls(float(cfg["pl_d0_db"]), float(cfg["d0_m"]), float(cfg["exponent"]),
                   float(cfg["shadowing_sigma_db"]))

    def mean_loss_db(self, distance_m: float) -> float:
        """Deterministic part of the loss at ``distance_m`` (clamped to d0 below it unless
        ``extrapolate_below_d0``)."""
        d = max(float(distance_m), 1e-3 if self.extrapolate_below_d0 else self.d0_m)
        return self.pl_d0_db + 10.0 * self.exponent * math.log10(d / self.d0_m)

    def loss_db(self, distance_m: float, rng: np.random.Generator) -> float:
        """One draw of the loss including shadowing (drawn once per link by the caller)."""
        shadow = rng.normal(0.0, self.shadowing_sigma_db) if self.shadowing_sigma_db else 0.0
        return self.mean_loss_db(distance_m) + float(shadow)


def sensitivity_dbm(sf: int, bw_hz: float, config: dict[str, Any] | None = None) -> float:
    """-174 + 10 log10(BW) + NF + SNR_min(SF) (thermal noise floor plus demodulator limit)."""
    cfg = (config if config is not None else load_phy_config())["sensitivity"]
    try:
        snr_min = float(cfg["snr_min_db"][str(sf)])
    except KeyError as exc:
        raise ValueError(f"no demodulator SNR limit for SF{sf} in the PHY config; add it") from exc
    return -174.0 + 10.0 * math.log10(bw_hz) + float(cfg["noise_figure_db"]) + snr_min
