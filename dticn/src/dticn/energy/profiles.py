"""Energy profiles: how a node's activity becomes energy, power and lifetime (issue 16).

Two profiles, one registry (:data:`ENERGY_PROFILES`), every report names its profile:

* ``optimised`` (ours): time per radio state times the SX1276 datasheet currents of
  ``sx1276.toml``, plus the MCU. It models the behaviour DSME-LoRa proposes but did not
  measure: the radio is on only for the beacon itself, an empty transmit GTS costs
  nothing, no regulator loss.
* ``dsme-lora`` (measured): DSME-LoRa's per-event energy measured on their RIOT/openDSME
  SX1276 node (Alamos et al., ACM TOSN 2022, arXiv 2206.14077, Table 4), through their
  90% regulator, in ``dsme_lora.toml``. Their firmware keeps the receiver on for the whole
  beacon slot and wakes for every (empty) transmit GTS, which is why it costs 3x to 12x ours.

A profile takes the node's :class:`~dticn.energy.model.EnergyMeter` (time per state) and
its :class:`Activity` (counts of MAC events) and uses what it needs.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

from dticn.energy.model import EnergyConfig, EnergyMeter, EnergyReport


@dataclass(frozen=True)
class Activity:
    """What one node's MAC did over ``[0, horizon_s]``, as counts (engines fill it in).

    Args:
        horizon_s: the accounted time.
        tracking_s: time synchronised to the beacons (the rest is scanning or idle).
        beacons: beacon intervals tracked (beacon slots with the receiver on).
        superframes: superframes tracked (one beacon slot, one CAP and one CFP each).
        tx_gts_slots / rx_gts_slots: occurrences of the node's transmit / receive GTS.
        gts_tx / cap_tx: data-frame transmissions (attempts) in a GTS / in the CAP.
        rx_frames: data frames received (and acknowledged).
        cap_rx: the receiver is on through every CAP.
    """

    horizon_s: float
    tracking_s: float
    beacons: int
    superframes: int
    tx_gts_slots: int = 0
    rx_gts_slots: int = 0
    gts_tx: int = 0
    cap_tx: int = 0
    rx_frames: int = 0
    cap_rx: bool = False

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class EnergyProfile(Protocol):
    """Turns a node's meter and activity into an :class:`EnergyReport`."""

    name: str
    battery_mah: float

    def report(self, meter: EnergyMeter, activity: Activity) -> EnergyReport: ...

    def cap_listen_current_ma(self, superframe_s: float, cap_share: float) -> float:
        """Average current added by listening through every CAP instead of sleeping."""
        ...


@dataclass(frozen=True)
class OptimisedProfile:
    """Ours: time per radio state x datasheet currents (``sx1276.toml``)."""

    config: EnergyConfig
    name: str = "optimised"

    @property
    def battery_mah(self) -> float:
        return self.config.battery_mah

    def report(self, meter: EnergyMeter, activity: Activity) -> EnergyReport:
        rep = meter.report(self.config, activity.horizon_s)
        rep.profile = self.name
        return rep

    def cap_listen_current_ma(self, superframe_s: float, cap_share: float) -> float:
        cfg = self.config
        return cap_share * (cfg.radio_ma["rx"] - cfg.radio_ma["sleep"] + cfg.mcu_active_ma
                            - cfg.mcu_sleep_ma)


@dataclass(frozen=True)
class MeasuredProfile:
    """DSME-LoRa's per-event energy (Table 4) through their regulator (``dsme_lora.toml``).

    Energy of a node, in mJ at the radio board (before the regulator):

    1. per beacon interval tracked: ``beacon_rx``; per other superframe:
       ``beacon_slot_inactive``;
    2. per superframe: ``cap_rx_on`` or ``cap_rx_off``, and ``cfp_no_gts``;
    3. per occurrence of a transmit / receive GTS: ``cfp_tx_gts_idle`` / ``cfp_rx_gts_idle``
       minus ``cfp_no_gts`` (the superframe's CFP cost is already counted);
    4. per frame: ``gts_tx``, ``csma_tx_with_ack`` or ``rx_with_ack_tx``;
    5. while not tracking: the receiver-on power ``scan`` (mW).

    Drawn from the battery: that energy / ``regulator_efficiency``; the report's charge is
    that over ``battery_v``, so its lifetime is capacity x voltage / power.
    """

    mj: dict[str, float]
    scan_mw: float
    regulator_efficiency: float
    battery_v: float
    battery_mah: float
    name: str = "dsme-lora"

    @classmethod
    def load(cls, path: str | Path | None = None, *, battery_mah: float) -> MeasuredProfile:
        if path is None:
            text = resources.files("dticn.energy").joinpath("dsme_lora.toml").read_text("utf-8")
        else:
            text = Path(path).read_text(encoding="utf-8")
        cfg = tomllib.loads(text)
        eta = float(cfg["regulator_efficiency"])
        if not 0 < eta <= 1:
            raise ValueError(f"regulator_efficiency={eta}: give a fraction in (0, 1]")
        return cls({k: float(v) for k, v in cfg["mj"].items()}, float(cfg["mw"]["scan"]),
                   eta, float(cfg["battery_v"]), battery_mah)

    def energy_mj(self, a: Activity) -> dict[str, float]:
        """Energy per kind of event at the radio board (steps 1-5 of the class docstring)."""
        c = self.mj
        return {
            "beacon_rx": a.beacons * c["beacon_rx"],
            "beacon_slot_inactive": max(a.superframes - a.beacons, 0) * c["beacon_slot_inactive"],
            "cap": a.superframes * (c["cap_rx_on"] if a.cap_rx else c["cap_rx_off"]),
            "cfp": a.superframes * c["cfp_no_gts"]
            + a.tx_gts_slots * (c["cfp_tx_gts_idle"] - c["cfp_no_gts"])
            + a.rx_gts_slots * (c["cfp_rx_gts_idle"] - c["cfp_no_gts"]),
            "gts_tx": a.gts_tx * c["gts_tx"],
            "cap_tx": a.cap_tx * c["csma_tx_with_ack"],
            "rx": a.rx_frames * c["rx_with_ack_tx"],
            "scan": max(a.horizon_s - a.tracking_s, 0.0) * self.scan_mw,
        }

    def report(self, meter: EnergyMeter, activity: Activity) -> EnergyReport:
        energy = self.energy_mj(activity)
        # mJ drawn from the battery / V = mA s of charge.
        scale = 1.0 / (self.regulator_efficiency * self.battery_v)
        charge = {k: v * scale for k, v in energy.items()}
        events = {k: v for k, v in activity.as_dict().items() if k != "horizon_s"}
        return EnergyReport(activity.horizon_s, {}, charge, meter.wakeups, self.battery_v,
                            self.battery_mah, profile=self.name, events=events)

    def cap_listen_current_ma(self, superframe_s: float, cap_share: float) -> float:
        extra_mj = self.mj["cap_rx_on"] - self.mj["cap_rx_off"]
        return extra_mj / superframe_s / (self.regulator_efficiency * self.battery_v)


def _optimised(energy_config: str | None, battery_mah: float | None) -> EnergyProfile:
    overrides = {} if battery_mah is None else {"battery_mah": battery_mah}
    return OptimisedProfile(EnergyConfig.load(energy_config, **overrides))


def _measured(energy_config: str | None, battery_mah: float | None) -> EnergyProfile:
    # The battery default is ours (sx1276.toml): the profile changes the node, not the cell.
    if battery_mah is None:
        battery_mah = EnergyConfig.load().battery_mah
    return MeasuredProfile.load(battery_mah=battery_mah)


ENERGY_PROFILES: dict[str, Callable[[str | None, float | None], EnergyProfile]] = {
    "optimised": _optimised,
    "dsme-lora": _measured,
}
"""Registry: name -> builder(energy_config file or None, battery mAh or None)."""


def load_energy_profile(name: str, *, energy_config: str | None = None,
                        battery_mah: float | None = None) -> EnergyProfile:
    """The energy profile ``name``; the error lists the known ones."""
    try:
        builder = ENERGY_PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown energy profile {name!r}; known: "
                         f"{', '.join(ENERGY_PROFILES)}") from None
    return builder(energy_config, battery_mah)
