"""Scenarios as data: a dataclass, or a TOML/JSON file with the same field names."""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

_UNITS = {"ms": 1e-3, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0,
          "w": 604800.0, "y": 365 * 86400.0}


def parse_duration(text: str | float | int) -> float:
    """``"1d"``, ``"600s"``, ``"10m"``, ``"30.72"`` (seconds) -> seconds."""
    if isinstance(text, int | float):
        return float(text)
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([a-z]*)\s*", text.lower())
    if not match or match.group(2) not in ("", *_UNITS):
        raise ValueError(f"duration {text!r}: write a number with a unit ms/s/m/h/d/w/y, "
                         "e.g. 600s, 10m, 1d, 365d")
    return float(match.group(1)) * _UNITS.get(match.group(2) or "s", 1.0)


@dataclass(frozen=True)
class Scenario:
    """One LoRa edge: a gateway (PAN coordinator) at the centre and ``nodes`` end nodes."""

    nodes: int = 10
    duration_s: float = 3600.0
    traffic: str = "periodic:60s"        # see dticn.radio.traffic.TRAFFIC
    payload_bytes: int = 20              # upper-layer bytes per item (MAC payload)
    seed: int = 1
    # PHY
    sf: int = 7
    bw_hz: float = 125_000.0
    cr: int = 1
    preamble: int = 8
    tx_power_dbm: float = 14.0
    radius_m: float = 100.0
    shadowing: bool = True
    fading_sigma_db: float = 0.0
    inter_sf: str = "matrix"
    capture_db: float = 6.0
    enforce_duty_cycle: bool = True
    # MAC
    so: int = 3
    mo: int = 5
    bo: int = 5
    channels: int = 16
    rx_chains: int = 1
    tx_chains: int = 1
    allocator: str = "first-fit"
    downlink_gts: bool = False
    association: str = "static"
    cap_rx: bool = False
    # Beacon/CAP channel, duty-cycle rule, CAP queue: model (ours) or dsme-lora, see
    # dticn.radio.cap_plan; CAP data confirmed (ACK) or not; CAD misses a busy channel
    cap_plan: str = "model"
    cap_ack: bool = True
    cad_miss_prob: float = 0.0
    slot: str = "gts"                    # where the node's traffic goes: gts or cap
    # Which MAC: dsme (IEEE 802.15.4e DSME, the paper's), lorawan-a / lorawan-b (LoRaWAN
    # class A / B, dticn.mac.lorawan); LoRaWAN uplinks confirmed (ACK, retransmissions) or not
    mac: str = "dsme"
    confirmed: bool = False
    # Engine
    engine: str = "auto"                 # auto, batch, events
    upkeep: str = "closed"               # closed (closed form) or events (every beacon)
    # Configuration files (None: the packaged defaults)
    phy_config: str | None = None
    mac_config: str | None = None
    energy_config: str | None = None
    battery_mah: float | None = None
    # How activity becomes energy: optimised (ours) or dsme-lora (measured), see
    # dticn.energy.profiles
    energy_profile: str = "optimised"

    def __post_init__(self) -> None:
        if self.nodes < 1:
            raise ValueError(f"nodes={self.nodes}: a scenario needs at least one node")
        if self.duration_s <= 0:
            raise ValueError(f"duration {self.duration_s} s: must be positive")
        if self.engine not in ("auto", "batch", "events"):
            raise ValueError(f"engine={self.engine!r}: use auto, batch or events")
        if self.slot not in ("gts", "cap"):
            raise ValueError(f"slot={self.slot!r}: use gts or cap")
        from dticn.radio.cap_plan import get_cap_plan
        get_cap_plan(self.cap_plan)
        if not 0.0 <= self.cad_miss_prob <= 1.0:
            raise ValueError(f"cad_miss_prob={self.cad_miss_prob}: give a probability 0..1")
        from dticn.energy.profiles import ENERGY_PROFILES, check_profile_for_mac
        if self.energy_profile not in ENERGY_PROFILES:
            raise ValueError(f"energy_profile={self.energy_profile!r}: use one of "
                             f"{', '.join(ENERGY_PROFILES)}")
        from dticn.mac.lorawan_config import MAC_NAMES
        if self.mac not in MAC_NAMES:
            raise ValueError(f"mac={self.mac!r}: use one of {', '.join(MAC_NAMES)}")
        check_profile_for_mac(self.energy_profile, self.mac)
        if self.confirmed and self.mac == "dsme":
            raise ValueError("confirmed: DSME confirms every GTS frame with its own ACK; "
                             "'confirmed' is a LoRaWAN setting (use --mac lorawan-a)")

    @classmethod
    def from_file(cls, path: str | Path, **overrides: Any) -> Scenario:
        """Load a TOML or JSON scenario; durations may be strings ("1d")."""
        p = Path(path)
        text = p.read_text(encoding="utf-8")
        data = json.loads(text) if p.suffix == ".json" else tomllib.loads(text)
        data = data.get("scenario", data)
        if "duration" in data:
            data["duration_s"] = parse_duration(data.pop("duration"))
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown scenario keys {sorted(unknown)} in {p}; "
                             f"known: {sorted(known)}")
        data.update(overrides)
        return cls(**data)

    def with_(self, **changes: Any) -> Scenario:
        return replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
