"""Energy model: time per radio/MCU state per node, currents from ``sx1276.toml``."""

from dticn.energy.model import EnergyConfig, EnergyMeter, EnergyReport

__all__ = ["EnergyConfig", "EnergyMeter", "EnergyReport"]
