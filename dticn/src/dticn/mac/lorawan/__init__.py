"""LoRaWAN class A and class B on the simulated LoRa PHY: end devices and a gateway with
its network server (LoRaWAN 1.0.3; EU868 settings in ``dticn/mac/lorawan_eu868.toml``,
read by :mod:`dticn.mac.lorawan_config`).

One module per part:

* :mod:`~dticn.mac.lorawan.messages`: the frames on air (uplink, downlink) and the counters;
* :mod:`~dticn.mac.lorawan.end`: what the device and the gateway share (clock, duty cycle,
  channels, payload limit, reporting);
* :mod:`~dticn.mac.lorawan.rx_window`: the one receive window every device window uses
  (RX1, RX2, the beacon window, the ping slots);
* :mod:`~dticn.mac.lorawan.class_a`: the class A device (ALOHA uplinks, RX1/RX2,
  retransmissions, FPending, keep-alive);
* :mod:`~dticn.mac.lorawan.network_server`: the gateway and its network server (half
  duplex, demodulators, downlink queues, ACKs in RX1 or RX2);
* :mod:`~dticn.mac.lorawan.class_b`: all of class B: the ping-slot and beacon timing both
  ends compute, the beacon, the gateway's beacons and ping slots, the class B device.

Both ends speak the interface the NDN faces use on DSME (``send(dest, payload, ...)``
returning a :class:`~dticn.mac.platform.MacRequest`, ``on_receive(src, payload, RxMeta)``,
``max_payload``, observers of :class:`~dticn.mac.platform.MacEvent`, reported as DSME
reports them: :class:`~dticn.mac.endpoint.MacReporter`), so the same edge runs on either
MAC. Every radio state change goes through :class:`~dticn.phy.radio.SimRadio`, so the
energy meter sees the time really spent; the device also counts its uplinks, their time
on air, and its time listening and waiting in the windows for the per-event energy
profiles.
"""

from __future__ import annotations

from dticn.mac.lorawan.class_a import ClassADevice
from dticn.mac.lorawan.class_b import (
    BEACON_GUARD_S,
    BEACON_RESERVED_S,
    PING_LEAD_S,
    PING_SLOT_S,
    Beacon,
    ClassBCounters,
    ClassBDevice,
    ClassBGateway,
    class_b_uplink_start,
    next_ping_slot,
    ping_slot_times,
)
from dticn.mac.lorawan.end import LorawanEnd
from dticn.mac.lorawan.messages import DeviceCounters, Downlink, GatewayCounters, Uplink
from dticn.mac.lorawan.network_server import LorawanGateway
from dticn.mac.lorawan.rx_window import ReceiveWindow

__all__ = [
    "BEACON_GUARD_S",
    "BEACON_RESERVED_S",
    "PING_LEAD_S",
    "PING_SLOT_S",
    "Beacon",
    "ClassADevice",
    "ClassBCounters",
    "ClassBDevice",
    "ClassBGateway",
    "DeviceCounters",
    "Downlink",
    "GatewayCounters",
    "LorawanEnd",
    "LorawanGateway",
    "ReceiveWindow",
    "Uplink",
    "class_b_uplink_start",
    "next_ping_slot",
    "ping_slot_times",
]
