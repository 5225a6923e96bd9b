"""The event-by-event engine: one gateway, many nodes, a shared medium, one kernel.

Every frame is simulated (CSMA/CA, collisions, capture, ACKs, retries); periodic upkeep
is simulated too with ``upkeep="events"`` or booked in closed form with ``"closed"``.
This is also the engine an upper layer (the NDN forwarder through a LoRa face) plugs
into: ``network.kernel`` is its :class:`~dticn.clock.Clock`, ``network.gateway`` and
``network.devices[i]`` are the MACs whose ``send``/``on_receive`` it uses.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from dticn.energy.model import EnergyMeter
from dticn.mac.coordinator import DsmeCoordinator
from dticn.mac.device import DsmeDevice
from dticn.mac.frames import RxMeta
from dticn.mac.gts import GtsTable
from dticn.mac.platform import MacEvent, Platform
from dticn.phy.dutycycle import DutyCycleTracker
from dticn.phy.medium import Medium, Transmission
from dticn.phy.radio import CoordinatorRadio, SimRadio
from dticn.radio.context import RadioContext, build_context
from dticn.radio.radio_items import ItemTraffic, run_in_chunks
from dticn.radio.results import NodeResult, RadioResult
from dticn.radio.scenario import Scenario
from dticn.radio.topology import GATEWAY
from dticn.radio.upkeep_closed_form import book_upkeep, node_activity, reception_probability
from dticn.sim.kernel import EventKernel


class RadioNetwork:
    """Builds and runs the event-by-event model of a scenario."""

    def __init__(self, scenario: Scenario, ctx: RadioContext | None = None, *,
                 traffic: bool = True) -> None:
        self.s = scenario
        self.ctx = ctx if ctx is not None else build_context(scenario)
        s, ctx = self.s, self.ctx
        self.kernel = EventKernel()
        self.medium = Medium(self.kernel, ctx.interference, ctx.sensitivity.__getitem__,
                             ctx.topology.loss_db, fading_sigma_db=s.fading_sigma_db,
                             rng=np.random.default_rng([s.seed, 424242]),
                             collision=ctx.collision)
        self.medium.observers.append(self._medium_event)
        gw_radio = CoordinatorRadio(GATEWAY, self.kernel, self.medium, s.sf, s.tx_power_dbm)
        self.gateway = DsmeCoordinator(
            GATEWAY,
            Platform(self.kernel, random.Random(s.seed * 1_000_003), gw_radio, ctx.phy,
                     DutyCycleTracker(ctx.plan, enforce=s.enforce_duty_cycle, rule="window")),
            ctx.mac, ctx.table, allocator=s.allocator)
        self.medium.attach(GATEWAY, self.gateway, always=True)
        self.gateway.on_receive = self._gateway_rx
        self.devices: dict[int, DsmeDevice] = {}
        self.meters: dict[int, EnergyMeter] = {}
        self.stats = {i: NodeResult(i, margin_db=ctx.margin_db(i))
                      for i in range(1, s.nodes + 1)}
        for i in range(1, s.nodes + 1):
            meter = EnergyMeter(since=0.0, tx_power_dbm=s.tx_power_dbm)
            radio = SimRadio(i, self.kernel, self.medium, s.sf, s.tx_power_dbm, meter)
            platform = Platform(self.kernel, random.Random(s.seed * 1_000_003 + i), radio,
                                ctx.phy, DutyCycleTracker(ctx.plan, enforce=s.enforce_duty_cycle,
                                                          rule=ctx.node_duty_rule))
            dev = DsmeDevice(i, GATEWAY, platform, ctx.mac, meter=meter, upkeep=s.upkeep,
                             association=s.association,
                             gts_directions=("up", "down") if s.downlink_gts else ("up",))
            if s.association == "static":
                dev.install_gts(list(ctx.table.by_device.get(i, [])))
            dev.observers.append(self._device_event)
            self.medium.attach(i, dev)
            self.devices[i] = dev
            self.meters[i] = meter
        # Sinks of peer-to-peer CAP traffic (ctx.sink_of): coordinators that never beacon,
        # listening in the CAP and ACKing their sources' frames.
        self._dest: dict[int, int] = dict(ctx.sink_of or {})
        self.sinks: dict[int, DsmeCoordinator] = {}
        for sink in sorted(set(self._dest.values())):
            radio_s = CoordinatorRadio(sink, self.kernel, self.medium, s.sf, s.tx_power_dbm)
            node = DsmeCoordinator(
                sink,
                Platform(self.kernel, random.Random(s.seed * 1_000_003 + sink), radio_s,
                         ctx.phy, DutyCycleTracker(ctx.plan, enforce=s.enforce_duty_cycle,
                                                   rule="window")),
                ctx.mac, GtsTable(ctx.mac.timing, channels=s.channels), allocator=s.allocator)
            node.on_receive = self._gateway_rx
            self.medium.attach(sink, node, always=True)
            self.sinks[sink] = node
        self.items = ItemTraffic(s, self.kernel, self.devices, self._send_item)
        # Frames per node by kind, for the per-event energy profiles.
        self._activity: dict[int, dict[str, int]] = {
            i: {"gts_tx": 0, "cap_tx": 0, "rx_frames": 0} for i in self.devices}
        self._traffic = traffic
        self.frames = 0

    # -- traffic ----------------------------------------------------------------------
    def _send_item(self, node: int, payload: bytes) -> None:
        self.stats[node].generated += 1
        self.devices[node].send(self._dest.get(node, GATEWAY), payload, slot=self.s.slot)

    def _gateway_rx(self, src: int, payload: bytes, meta: RxMeta) -> None:
        if src in self.stats and self.items.received(src, payload, meta.time):
            self.stats[src].delivered += 1

    def _device_event(self, event: MacEvent) -> None:
        st = self.stats[event.node]
        if event.kind == "tx":
            self._activity[event.node][f"{event.detail.get('slot', 'gts')}_tx"] += 1
            st.tx_frames += 1
            self.frames += 1
        elif event.kind == "rx":
            self._activity[event.node]["rx_frames"] += 1
        elif event.kind == "retry":
            st.retries += 1
        elif event.kind == "failed":
            st.failed += 1

    def _medium_event(self, what: str, tx: Transmission, receiver: int) -> None:
        if what == "collision" and tx.sender in self.stats:
            self.stats[tx.sender].collisions += 1

    # -- running ----------------------------------------------------------------------
    def start(self) -> None:
        self.gateway.start()
        for dev in self.devices.values():
            dev.start()
        if self._traffic:
            self.items.start()

    def run(self, progress: Callable[[float], Any] | None = None) -> RadioResult:
        """Run to the scenario's horizon; ``progress(fraction)`` is called now and then."""
        wall = time.perf_counter()
        self.start()
        run_in_chunks(self.kernel, self.s.duration_s,
                      max(self.s.duration_s / 200, self.ctx.mac.timing.multisuperframe_s),
                      progress)
        return self.result(time.perf_counter() - wall)

    def result(self, wall_s: float = 0.0) -> RadioResult:
        """Per-node results over the time simulated so far (callable more than once)."""
        s, ctx = self.s, self.ctx
        horizon = self.kernel.now()
        if horizon <= 0:
            raise ValueError("nothing simulated yet: run the kernel before asking for results")
        nodes = []
        for i, dev in self.devices.items():
            st = self.stats[i]
            self.meters[i].transition(self.meters[i].state, horizon)   # close the interval
            meter = self.meters[i].copy()    # closed-form upkeep goes on a copy
            if s.upkeep == "closed" and dev.tracking_since is not None:
                p_beacon = reception_probability(ctx.margin_db(i), s.fading_sigma_db)
                counts = book_upkeep(meter, ctx.mac, start=dev.tracking_since, end=horizon,
                                     beacon_toa_s=ctx.beacon_toa_s, downlink=dev.downlink,
                                     beacon_loss_prob=1.0 - p_beacon,
                                     cap_busy_s=dev.cap_held_s)
                st.lost_beacons = counts["lost_beacons"]
                st.sync_losses = counts["sync_losses"]
            else:
                st.lost_beacons = dev.lost_beacons
                st.sync_losses = dev.sync_losses
            tracking = dev.tracking_since if dev.tracking_since is not None else horizon
            st.energy = ctx.energy_profile.report(meter, node_activity(
                ctx.mac, start=tracking, end=horizon, uplink=dev.uplink, downlink=dev.downlink,
                **self._activity[i]))
            st.airtime_s = sum(dev.p.duty.airtime_s.values())
            st.duty_by_subband = dev.p.duty.duty_cycle(horizon)
            st.latencies_s = np.asarray(self.items.latencies[i])
            st.queue_drops = dev.queue_drops
            st.pending = len(dev.gts_queue) + len(dev.cap.queue) + int(dev.cap.busy)
            nodes.append(replace(st))   # a snapshot: later runs do not change it
        gw = self.gateway
        duty = gw.p.duty.duty_cycle(horizon)
        limits = {b.name: b.duty_cycle for b in ctx.plan.subbands}
        gateway = {"beacons": gw.beacons_sent, "acks": gw.acks_sent,
                   "duty_cycle_by_subband": duty,
                   "duty_cycle_exceeded": sorted(b for b, v in duty.items() if v > limits[b]),
                   "duty_cycle_violations": gw.p.duty.violations,
                   "medium": vars(self.medium.stats).copy()}
        return RadioResult(s, "events", nodes, gateway, wall_s, self.kernel.events_processed,
                           self.frames)
