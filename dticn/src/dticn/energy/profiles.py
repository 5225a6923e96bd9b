"""Energy profiles: how a node's activity becomes energy, power and lifetime (issue 16).

Three profiles, one registry (:data:`ENERGY_PROFILES`), every report names its profile;
:data:`PROFILE_MACS` says which MACs each was measured for:

* ``optimised`` (ours): time per radio state times the SX1276 datasheet currents of
  ``sx1276.toml``, plus the MCU. It models the behaviour DSME-LoRa proposes but did not
  measure: the radio is on only for the beacon itself, an empty transmit GTS costs
  nothing, no regulator loss.
* ``dsme-lora`` (measured): DSME-LoRa's per-event energy measured on their RIOT/openDSME
  SX1276 node (Alamos et al., ACM TOSN 2022, arXiv 2206.14077, Table 4), through their
  90% regulator, in ``dsme_lora.toml``. Their firmware keeps the receiver on for the whole
  beacon slot and wakes for every (empty) transmit GTS, which is why it costs 3x to 12x ours.
* ``casals-class-a`` (measured): Casals et al.'s LoRaWAN class A end device (Sensors 2017),
  per-state currents and durations of one uplink transaction, in ``casals_class_a.toml``.

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
        uplinks: LoRaWAN uplink transmissions (attempts, retransmissions included).
        uplink_tx_s: their time on air.
        rx_window_s / rx_wait_s: LoRaWAN receive windows: time listening, and time between
            an uplink's end and its last window's end spent not listening (RECEIVE_DELAY).
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
    uplinks: int = 0
    uplink_tx_s: float = 0.0
    rx_window_s: float = 0.0
    rx_wait_s: float = 0.0

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


@dataclass(frozen=True)
class ClassAMeasuredProfile:
    """Casals et al.'s measured LoRaWAN class A end device (``casals_class_a.toml``).

    Casals, Mir, Vidal, Gomez, "Modeling the Energy Performance of LoRaWAN", Sensors 17(10)
    2364, 2017, measured each state of one uplink transaction on their platform; charge of
    a node over the horizon, in mA s:

    1. per uplink: wake-up, radio preparation, radio off, post-processing and turn-off at
       their measured currents and durations (``[per_uplink]``);
    2. the uplink's time on air at the transmit current, the time waiting for the receive
       windows (RECEIVE_DELAY1/2) at the wait current, the time in the windows at the
       receive current (durations from the engine: :class:`Activity` ``uplink_tx_s``,
       ``rx_wait_s``, ``rx_window_s``);
    3. the rest of the horizon at the sleep current.

    Only a LoRaWAN engine fills in those counts; a DSME scenario refuses the profile.
    """

    per_uplink: dict[str, tuple[float, float]]
    tx_ma: float
    wait_ma: float
    rx_ma: float
    sleep_ma: float
    supply_v: float
    battery_mah: float
    name: str = "casals-class-a"

    @classmethod
    def load(cls, path: str | Path | None = None, *,
             battery_mah: float) -> ClassAMeasuredProfile:
        if path is None:
            text = resources.files("dticn.energy").joinpath(
                "casals_class_a.toml").read_text("utf-8")
        else:
            text = Path(path).read_text(encoding="utf-8")
        cfg = tomllib.loads(text)
        steps = {k: (float(v["ms"]) / 1e3, float(v["ma"])) for k, v in cfg["per_uplink"].items()}
        ma = cfg["ma"]
        return cls(steps, float(ma["tx"]), float(ma["wait"]), float(ma["rx"]),
                   float(ma["sleep"]), float(cfg["supply_v"]), battery_mah)

    def per_uplink_mas(self) -> float:
        """Charge of the fixed steps of one uplink transaction."""
        return sum(seconds * ma for seconds, ma in self.per_uplink.values())

    def per_uplink_s(self) -> float:
        return sum(seconds for seconds, _ in self.per_uplink.values())

    def report(self, meter: EnergyMeter, activity: Activity) -> EnergyReport:
        a = activity
        active_s = (a.uplinks * self.per_uplink_s() + a.uplink_tx_s + a.rx_wait_s
                    + a.rx_window_s)
        charge = {
            "fixed_steps": a.uplinks * self.per_uplink_mas(),
            "tx": a.uplink_tx_s * self.tx_ma,
            "wait": a.rx_wait_s * self.wait_ma,
            "rx": a.rx_window_s * self.rx_ma,
            "sleep": max(a.horizon_s - active_s, 0.0) * self.sleep_ma,
        }
        time_s = {"fixed_steps": a.uplinks * self.per_uplink_s(), "tx": a.uplink_tx_s,
                  "wait": a.rx_wait_s, "rx": a.rx_window_s,
                  "sleep": max(a.horizon_s - active_s, 0.0)}
        events = {"uplinks": a.uplinks}
        return EnergyReport(a.horizon_s, time_s, charge, meter.wakeups, self.supply_v,
                            self.battery_mah, profile=self.name, events=events)

    def cap_listen_current_ma(self, superframe_s: float, cap_share: float) -> float:
        raise ValueError("casals-class-a is a LoRaWAN class A device: it has no CAP")


def _class_a(energy_config: str | None, battery_mah: float | None) -> EnergyProfile:
    if battery_mah is None:   # as for dsme-lora: the profile changes the node, not the cell
        battery_mah = EnergyConfig.load().battery_mah
    return ClassAMeasuredProfile.load(battery_mah=battery_mah)


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
    "casals-class-a": _class_a,
}
"""Registry: name -> builder(energy_config file or None, battery mAh or None)."""

#: The MACs whose activity each profile can price (``optimised`` books radio states, so
#: it prices any MAC; the measured ones count one firmware's events).
PROFILE_MACS: dict[str, tuple[str, ...]] = {
    "optimised": ("dsme", "lorawan-a", "lorawan-b"),
    "dsme-lora": ("dsme",),
    "casals-class-a": ("lorawan-a",),
}


def check_profile_for_mac(profile: str, mac: str) -> None:
    """Refuse a measured profile on a MAC it was not measured for (its counts would be 0)."""
    macs = PROFILE_MACS.get(profile)
    if macs is not None and mac not in macs:
        fitting = [p for p, m in PROFILE_MACS.items() if mac in m]
        raise ValueError(f"energy profile {profile!r} was measured on {' / '.join(macs)}, "
                         f"not {mac}; for {mac} use {' or '.join(fitting)}")


MEASURED_FOR_MAC: dict[str, str] = {"dsme": "dsme-lora", "lorawan-a": "casals-class-a"}
"""The measured profile of each MAC that has one (class B has none: the datasheet model)."""


def energy_profile_for_mac(profile: str, mac: str) -> str:
    """``profile`` where it applies to ``mac``; else ``mac``'s measured counterpart (a
    measured profile stays measured: ``dsme-lora`` on DSME becomes ``casals-class-a`` on
    LoRaWAN class A), else the datasheet model ``optimised``. For comparisons of one
    edge across MACs; a profile the user names explicitly is checked instead
    (:func:`check_profile_for_mac`)."""
    macs = PROFILE_MACS.get(profile)
    if macs is None or mac in macs:
        return profile
    return MEASURED_FOR_MAC.get(mac, "optimised")


def load_energy_profile(name: str, *, energy_config: str | None = None,
                        battery_mah: float | None = None) -> EnergyProfile:
    """The energy profile ``name``; the error lists the known ones."""
    try:
        builder = ENERGY_PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown energy profile {name!r}; known: "
                         f"{', '.join(ENERGY_PROFILES)}") from None
    return builder(energy_config, battery_mah)
