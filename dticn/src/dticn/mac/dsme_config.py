"""The MAC's configuration, read from ``dsme.toml`` (package data) with overrides."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from dticn.mac.csma import CsmaParams
from dticn.mac.timing import DsmeTiming

#: CAP channel-access variants (:attr:`MacConfig.cap_access`).
CAP_ACCESS = ("slotted", "opendsme")


@dataclass(frozen=True)
class MacConfig:
    """Everything a DSME MAC instance needs besides its platform."""

    timing: DsmeTiming = field(default_factory=DsmeTiming)
    csma: CsmaParams = field(default_factory=CsmaParams)
    data_overhead: int = 11
    ack_bytes: int = 5
    beacon_bytes: int = 35
    association_request_bytes: int = 20
    association_response_bytes: int = 25
    max_psdu: int = 127
    beacon_guard_s: float = 0.005
    gts_rx_window_s: float = 0.020
    turnaround_s: float = 0.001
    wakeup_s: float = 0.001
    max_lost_beacons: int = 4
    beacon_channel: int = 0
    cap_channel: int = 0
    queue_limit: int = 256
    cap_rx: bool = False
    #: Frames a node's CAP queue holds (the one in transmission included); the rest are
    #: dropped and counted. None: no limit (ours); openDSME on RIOT: 8.
    cap_queue_limit: int | None = None
    #: CAP data frames ask for an ACK (confirmed); False: sent once, unconfirmed.
    cap_ack: bool = True
    #: Probability that CAD reports a busy channel as idle (DSME-LoRa's CCA is CAD, which
    #: can miss a frame in progress); 0: ideal sensing.
    cad_miss_prob: float = 0.0
    #: How the CAP reaches the channel: ``slotted`` (IEEE 802.15.4-2015 6.2.5.1: backoff
    #: boundaries, a deferral with a further random backoff when the transaction does not
    #: fit) or ``opendsme`` (openDSME's CAPLayer as DSME-LoRa's simulation ran it: unslotted,
    #: the backoff counts usable CAP time and carries over, :meth:`DsmeTiming.cap_countdown`).
    cap_access: str = "slotted"
    #: macAckWaitDuration from the end of the frame; None: 2 x turnaround + ACK airtime.
    ack_wait_s: float | None = None

    def __post_init__(self) -> None:
        if self.cap_access not in CAP_ACCESS:
            raise ValueError(f"cap_access {self.cap_access!r}; known: {', '.join(CAP_ACCESS)}")

    @property
    def max_payload(self) -> int:
        """Largest upper-layer payload per frame (127-byte PSDU minus MAC header and FCS)."""
        return self.max_psdu - self.data_overhead

    @property
    def response_wait_s(self) -> float:
        """How long a device listens for an association response (two superframes)."""
        return 2 * self.timing.superframe_s

    @classmethod
    def load(cls, path: str | Path | None = None, **overrides: Any) -> MacConfig:
        """Read ``dsme.toml`` (or another file); keyword overrides win (``so=``, ``min_be=``...)."""
        if path is None:
            text = resources.files("dticn.mac").joinpath("dsme.toml").read_text("utf-8")
        else:
            text = Path(path).read_text(encoding="utf-8")
        cfg = tomllib.loads(text)
        timing_keys = set(DsmeTiming.__dataclass_fields__)
        csma_keys = set(CsmaParams.__dataclass_fields__)
        timing = {k: v for k, v in cfg["superframe"].items() if k in timing_keys}
        csma = {k: v for k, v in cfg["csma"].items() if k in csma_keys}
        frames = cfg["frames"]
        values: dict[str, Any] = {
            "data_overhead": int(frames["data_overhead"]), "ack_bytes": int(frames["ack"]),
            "beacon_bytes": int(frames["beacon"]),
            "association_request_bytes": int(frames["association_request"]),
            "association_response_bytes": int(frames["association_response"]),
            "max_psdu": int(frames["max_psdu"]),
        }
        values.update({k: v for k, v in cfg["timing"].items() if k in cls.__dataclass_fields__})
        for key in list(overrides):
            if key in timing_keys:
                timing[key] = overrides.pop(key)
            elif key in csma_keys:
                csma[key] = overrides.pop(key)
        unknown = set(overrides) - set(cls.__dataclass_fields__)
        if unknown:
            raise TypeError(f"unknown MAC settings {sorted(unknown)}; see dsme.toml for names")
        values.update(overrides)
        return cls(timing=DsmeTiming(**timing), csma=CsmaParams(**csma), **values)

    def with_(self, **changes: Any) -> MacConfig:
        return replace(self, **changes)
