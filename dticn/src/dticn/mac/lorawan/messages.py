"""What goes on air between a LoRaWAN device and its gateway, and what each end counts
(LoRaWAN 1.0.3 section 4, the MAC message formats, reduced to what the model uses).

Frames are Python objects on the simulated medium: their size on air is the payload plus
``frame_overhead_bytes`` (``lorawan_eu868.toml``), counted where the time on air is
computed. Class B's beacon and counters are in :mod:`dticn.mac.lorawan.class_b`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dticn.mac.platform import MacRequest


@dataclass(eq=False)
class Uplink:
    """A data frame on air: who, which frame counter, whether it asks for an ACK."""

    src: int
    fcnt: int
    payload: bytes
    confirmed: bool
    attempt: int
    generated_at: float
    request: MacRequest | None = None


@dataclass(eq=False)
class Downlink:
    """A frame from the network server to one device: an ACK, a payload, or both;
    ``fpending``: more is queued for the device."""

    dst: int
    ack_fcnt: int | None
    payload: bytes = b""
    fpending: bool = False


@dataclass
class DeviceCounters:
    """What one class A device did (frames, failures, and where its awake time went)."""

    uplinks: int = 0
    retransmissions: int = 0
    acked: int = 0
    failed: int = 0
    queue_drops: int = 0
    downlinks: int = 0
    downlink_payloads: int = 0
    empty_uplinks: int = 0
    uplink_tx_s: float = 0.0
    rx_window_s: float = 0.0
    rx_wait_s: float = 0.0
    duty_deferrals: int = 0


@dataclass
class GatewayCounters:
    """What the gateway heard and answered (the ping-slot rows stay zero on class A)."""

    received: int = 0
    duplicates: int = 0
    lost_half_duplex: int = 0
    lost_no_demodulator: int = 0
    acks_rx1: int = 0
    acks_rx2: int = 0
    acks_dropped: int = 0
    downlinks_rx1: int = 0
    downlinks_rx2: int = 0
    downlinks_deferred: int = 0
    downlinks_too_large_for_rx2: int = 0
    downlinks_ping: int = 0
    downlinks_too_large_for_ping: int = 0
    downlink_queue_drops: int = 0
    downlink_airtime_s: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))
