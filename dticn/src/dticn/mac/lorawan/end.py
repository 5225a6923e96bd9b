"""What both ends of a LoRaWAN link hold and do alike (the device, class A or B, and the
gateway with its network server): the kernel's clock, the duty-cycle tracker, the uplink
channels and RX2's, the payload limit at the end's data rate, and requests reported as
every MAC reports them (:class:`~dticn.mac.endpoint.MacReporter`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dticn.mac.endpoint import MacReporter
from dticn.mac.lorawan_config import LorawanConfig
from dticn.mac.platform import MacObserver, MacRequest
from dticn.phy.airtime import LoRaParams
from dticn.phy.dutycycle import DutyCycleTracker
from dticn.sim.kernel import EventKernel


class LorawanEnd(MacReporter):
    """The shared part of :class:`~dticn.mac.lorawan.class_a.ClassADevice` and
    :class:`~dticn.mac.lorawan.network_server.LorawanGateway` (each sets its own radio)."""

    #: A request refused for a full queue is a "drop" (counted apart), not a "failed".
    QUEUE_FULL_EVENT = "drop"

    def __init__(self, address: int, kernel: EventKernel, duty: DutyCycleTracker,
                 config: LorawanConfig, phy: LoRaParams, uplink_channels: int,
                 rx2_channel: int) -> None:
        self.address = address
        self.kernel = kernel
        self.duty = duty
        self.cfg = config
        self.phy = phy
        self.uplink_channels = uplink_channels
        self.rx2_channel = rx2_channel
        self.observers: list[MacObserver] = []

    def _now(self) -> float:
        return self.kernel.now()

    @property
    def max_payload(self) -> int:
        """Largest payload of one frame at this end's data rate (the gateway's: RX1's at
        the network's; a frame above RX2's 51 bytes waits for an RX1 it fits)."""
        return self.cfg.max_payload(self.phy.sf)

    def _request(self, dest: int, payload: bytes, slot: str,
                 on_result: Callable[[MacRequest], Any] | None, context: Any,
                 limit: str) -> MacRequest:
        """A request for ``payload``, refused when it exceeds ``max_payload`` (``limit``
        names which maximum in the message)."""
        if len(payload) > self.max_payload:
            raise ValueError(f"payload of {len(payload)} bytes exceeds LoRaWAN's "
                             f"{self.max_payload}-byte {limit} at SF{self.phy.sf}; fragment "
                             "above the MAC (NDNLPv2)")
        return MacRequest(dest, bytes(payload), slot, self.kernel.now(), on_result,
                          context=context)
