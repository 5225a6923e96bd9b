"""The event-by-event engine for LoRaWAN class A: one gateway, many devices, one medium.

The same PHY as the DSME engine (:class:`~dticn.phy.medium.Medium`: path loss, shadowing,
sensitivity, same-SF capture and the inter-SF matrix), the same node placement and the
same items (each node's arrivals from its own generator, so DSME and LoRaWAN see exactly
the same traffic), and the same results (:class:`~dticn.radio.results.RadioResult`); only
the MAC differs (:mod:`dticn.mac.lorawan`).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dticn.energy.model import EnergyMeter
from dticn.energy.profiles import Activity, EnergyProfile, load_energy_profile
from dticn.mac.lorawan import (
    ClassADevice,
    ClassBDevice,
    ClassBGateway,
    LorawanGateway,
    Uplink,
)
from dticn.mac.lorawan_config import LorawanConfig, data_rate
from dticn.mac.platform import MacEvent
from dticn.phy.airtime import LoRaParams
from dticn.phy.channels import ChannelPlan
from dticn.phy.config import load_phy_config
from dticn.phy.dutycycle import DutyCycleTracker
from dticn.phy.interference import InterferenceModel
from dticn.phy.medium import Medium, Transmission
from dticn.phy.radio import CoordinatorRadio, SimRadio
from dticn.radio.context import radio_links
from dticn.radio.radio_items import ItemTraffic, run_in_chunks
from dticn.radio.results import NodeResult, RadioResult
from dticn.radio.scenario import Scenario
from dticn.radio.topology import GATEWAY, Topology
from dticn.sim.kernel import EventKernel


@dataclass
class LorawanContext:
    """What a LoRaWAN run derives from its scenario."""

    scenario: Scenario
    phy: LoRaParams
    config: LorawanConfig
    plan: ChannelPlan
    uplink_channels: int
    interference: InterferenceModel
    sensitivity: dict[int, float]
    topology: Topology
    energy_profile: EnergyProfile

    @property
    def rx2_channel(self) -> int:
        return self.uplink_channels

    def margin_db(self, node: int) -> float:
        loss = self.topology.loss_db(GATEWAY, node)
        return self.scenario.tx_power_dbm - loss - self.sensitivity[self.phy.sf]


def build_lorawan_context(s: Scenario, config: LorawanConfig | None = None) -> LorawanContext:
    """Configs, channel plan and placement of a LoRaWAN scenario; refuses what LoRaWAN
    cannot carry (a payload over the data rate's maximum, an SF without a data rate)."""
    if s.mac not in ("lorawan-a", "lorawan-b"):
        raise ValueError(f"mac={s.mac!r}: this engine runs LoRaWAN (lorawan-a, lorawan-b)")
    cfg = config if config is not None else LorawanConfig.load()
    data_rate(s.sf, s.bw_hz)
    cfg.check_payload(s.payload_bytes, s.sf)
    phy_cfg = load_phy_config(s.phy_config)
    phy = LoRaParams(sf=s.sf, bw_hz=s.bw_hz, cr=s.cr, preamble=s.preamble)
    uplink_channels = min(s.channels, len(cfg.channels_hz))
    plan = cfg.channel_plan(uplink_channels, ChannelPlan.from_config(phy_cfg).subbands,
                            s.bw_hz)
    interference, sens, topology = radio_links(s, phy_cfg)
    profile = load_energy_profile(s.energy_profile, energy_config=s.energy_config,
                                  battery_mah=s.battery_mah)
    return LorawanContext(s, phy, cfg, plan, uplink_channels, interference, sens, topology,
                          profile)


class LorawanNetwork:
    """Builds and runs the event-by-event LoRaWAN class A model of a scenario."""

    def __init__(self, scenario: Scenario, ctx: LorawanContext | None = None, *,
                 traffic: bool = True, report_s: float | None = None) -> None:
        """``traffic``: generate the scenario's items (False: an upper layer sends, as the
        NDN edge does); ``report_s``: the devices' keep-alive period (None: none)."""
        self.s = scenario
        self._traffic = traffic
        self.ctx = ctx if ctx is not None else build_lorawan_context(scenario)
        s, ctx = self.s, self.ctx
        self.kernel = EventKernel()
        self.medium = Medium(self.kernel, ctx.interference, ctx.sensitivity.__getitem__,
                             ctx.topology.loss_db, fading_sigma_db=s.fading_sigma_db,
                             rng=np.random.default_rng([s.seed, 424242]))
        self.medium.observers.append(self._medium_event)
        gw_radio = CoordinatorRadio(GATEWAY, self.kernel, self.medium, s.sf, s.tx_power_dbm)
        class_b = s.mac == "lorawan-b"
        gateway_args = (GATEWAY, self.kernel, gw_radio,
                        DutyCycleTracker(ctx.plan, enforce=s.enforce_duty_cycle,
                                         rule="window"),
                        ctx.config, ctx.phy, ctx.uplink_channels, ctx.rx2_channel)
        class_b_gateway = ClassBGateway(*gateway_args) if class_b else None
        self.gateway: LorawanGateway = (class_b_gateway if class_b_gateway is not None
                                        else LorawanGateway(*gateway_args))
        self.gateway.on_uplink = self._gateway_rx
        if class_b_gateway is not None:
            class_b_gateway.start_beacons()
        self.medium.attach(GATEWAY, self.gateway, always=True)
        self.devices: dict[int, ClassADevice] = {}
        self.meters: dict[int, EnergyMeter] = {}
        self.stats = {i: NodeResult(i, margin_db=ctx.margin_db(i))
                      for i in range(1, s.nodes + 1)}
        for i in range(1, s.nodes + 1):
            meter = EnergyMeter(since=0.0, tx_power_dbm=s.tx_power_dbm)
            radio = SimRadio(i, self.kernel, self.medium, s.sf, s.tx_power_dbm, meter)
            args = (i, GATEWAY, self.kernel, radio,
                    DutyCycleTracker(ctx.plan, enforce=s.enforce_duty_cycle), ctx.config,
                    ctx.phy, ctx.uplink_channels, ctx.rx2_channel,
                    random.Random(s.seed * 1_000_003 + i))
            dev = (ClassBDevice(*args, confirmed=s.confirmed, report_s=report_s,
                                beacon_channel=ctx.rx2_channel,
                                beacon_toa_s=self.gateway.beacon_toa_s)
                   if class_b else ClassADevice(*args, confirmed=s.confirmed,
                                                report_s=report_s))
            dev.observers.append(self._device_event)
            if class_b_gateway is not None:
                class_b_gateway.class_b.add(i)
            self.medium.attach(i, radio)
            self.devices[i] = dev
            self.meters[i] = meter
        self.items = ItemTraffic(s, self.kernel, self.devices, self._send_item)
        self.frames = 0

    # -- traffic ----------------------------------------------------------------------
    def _send_item(self, node: int, payload: bytes) -> None:
        self.stats[node].generated += 1
        self.devices[node].send(GATEWAY, payload)

    def _gateway_rx(self, up: Uplink, at: float) -> None:
        if up.src in self.stats and self.items.received(up.src, up.payload, at):
            self.stats[up.src].delivered += 1

    def _device_event(self, event: MacEvent) -> None:
        st = self.stats[event.node]
        if event.kind == "tx":
            st.tx_frames += 1
            self.frames += 1
            if event.detail.get("attempt", 1) > 1:
                st.retries += 1
        elif event.kind == "failed":
            st.failed += 1

    def _medium_event(self, what: str, tx: Transmission, receiver: int) -> None:
        if what == "collision" and tx.sender in self.stats:
            self.stats[tx.sender].collisions += 1

    # -- running ----------------------------------------------------------------------
    def start(self) -> None:
        for dev in self.devices.values():
            dev.start()
        if self._traffic:
            self.items.start()

    def run(self, progress: Callable[[float], Any] | None = None) -> RadioResult:
        """Run to the horizon; ``progress(fraction)`` now and then."""
        wall = time.perf_counter()
        self.start()
        run_in_chunks(self.kernel, self.s.duration_s, self.s.duration_s / 200, progress)
        return self.result(time.perf_counter() - wall)

    def result(self, wall_s: float = 0.0) -> RadioResult:
        """Per-node results over the time simulated so far."""
        horizon = self.kernel.now()
        if horizon <= 0:
            raise ValueError("nothing simulated yet: run the kernel before asking for results")
        nodes = []
        for i, dev in self.devices.items():
            st = self.stats[i]
            meter = self.meters[i]
            meter.transition(meter.state, horizon)
            c = dev.counters
            activity = Activity(horizon_s=horizon, tracking_s=horizon, beacons=0,
                                superframes=0, rx_frames=c.downlinks, uplinks=c.uplinks,
                                uplink_tx_s=c.uplink_tx_s, rx_window_s=c.rx_window_s,
                                rx_wait_s=c.rx_wait_s)
            st.energy = self.ctx.energy_profile.report(meter.copy(), activity)
            st.airtime_s = sum(dev.duty.airtime_s.values())
            st.duty_by_subband = dev.duty.duty_cycle(horizon)
            st.latencies_s = np.asarray(self.items.latencies[i])
            st.queue_drops = c.queue_drops
            st.pending = dev.pending
            nodes.append(replace(st))
        gw = self.gateway
        duty = gw.duty.duty_cycle(horizon)
        limits = {b.name: b.duty_cycle for b in self.ctx.plan.subbands}
        gateway = {"mac": self.s.mac, "beacons": gw.beacons_sent,
                   "acks": gw.counters.acks_rx1 + gw.counters.acks_rx2,
                   "duty_cycle_by_subband": duty,
                   "duty_cycle_exceeded": sorted(b for b, v in duty.items() if v > limits[b]),
                   "duty_cycle_violations": gw.duty.violations,
                   "lorawan": gw.counters.as_dict(),
                   "class_b": {k: sum(getattr(d.b, k) for d in self.devices.values()
                                      if isinstance(d, ClassBDevice))
                               for k in ("beacons_received", "beacons_lost",
                                         "ping_slots_opened", "windows_skipped")}
                   if self.s.mac == "lorawan-b" else None,
                   "medium": vars(self.medium.stats).copy()}
        return RadioResult(self.s, "events", nodes, gateway, wall_s,
                           self.kernel.events_processed, self.frames)
