"""MAC frames as the simulator carries them (sizes, not bytes: the PHY needs the length).

The upper layer's payload travels as real ``bytes``; headers are represented by their
length in ``dsme.toml`` (IEEE 802.15.4 short-address data frame, Imm-Ack, enhanced beacon).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from dticn.phy.medium import BROADCAST

__all__ = ["BROADCAST", "Frame", "FrameKind", "RxMeta"]


class FrameKind(enum.StrEnum):
    BEACON = "beacon"
    DATA = "data"
    ACK = "ack"
    ASSOCIATION_REQUEST = "association_request"
    ASSOCIATION_RESPONSE = "association_response"


@dataclass(eq=False)
class Frame:
    """One MAC frame; ``psdu_bytes`` is what goes on air (LoRa payload length)."""

    kind: FrameKind
    src: int
    dst: int
    seq: int
    psdu_bytes: int
    payload: bytes = b""
    ack_request: bool = False
    info: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RxMeta:
    """What the receiver learns besides the payload (handed to the upper layer)."""

    time: float
    rssi_dbm: float
    snr_margin_db: float
    channel: int
    sf: int
