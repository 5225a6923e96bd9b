"""The artifact topology on one EventKernel, built from an :class:`Experiment`.

    consumer app - [consumer fwd] --20 ms-- [forwarder] --20 ms-- [gateway + scheme]
                                                                       || LoRa / DSME
                                                                 [node fwd] - node app
                                                                   (or LoRaWAN: exp.mac)

Every host runs a :class:`~dticn.forwarder.forwarder.Forwarder` with its CCN-lite
triple as default retransmission policy; Internet links are in-memory faces with delay and
seeded loss; the LoRa link is one face per node onto the DSME MAC of the radio simulator
(:class:`~dticn.radio.network.RadioNetwork`, static GTS: one uplink and one downlink slot per
node per multisuperframe, registration in the CAP). Metrics come from observers: the
:class:`~dticn.links.observer.PacketCounter` on every link, :class:`MacFrameMeter` on the
MACs, the energy meters of the radio simulator, and the item log the applications keep.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np

from dticn.apps.consumer import ConsumerApp
from dticn.apps.items import ItemLog
from dticn.apps.producer import NodeApp
from dticn.edge_profiles import Profile, get_profile
from dticn.energy.profiles import energy_profile_for_mac
from dticn.experiments.params import Experiment
from dticn.forwarder.forwarder import Forwarder
from dticn.forwarder.hooks import ForwarderHooks
from dticn.forwarder.settings import ForwarderConfig
from dticn.links.app_endpoint import Endpoint
from dticn.links.internet import InternetLink
from dticn.links.observer import PacketCounter
from dticn.lora_edge import (
    LORA_LINK,
    EdgeSettings,
    build_edge,
    edge_mac_timing,
    edge_radio,
    item_times,
    keepalive_period,
)
from dticn.mac.platform import MacEvent
from dticn.net.lora_pcap import LoRaTrace, trace_radio
from dticn.net.pcap import PcapWriter, trace_forwarder
from dticn.packets.name import Name, name_from_str
from dticn.packets.tlv import encode_tlv
from dticn.radio.capacity import DutyOverload, Overload, duty_overload, gts_overload
from dticn.radio.context import build_context
from dticn.radio.scenario import Scenario
from dticn.schemes import get as get_config
from dticn.schemes.base import SchemeConfig
from dticn.schemes.signalling import RNP_PREFIX, SIGNAL_CONTENT_TYPES

INTERNET_LINKS = ("consumer-forwarder", "forwarder-gateway")
__all__ = ["INTERNET_LINKS", "LORA_LINK", "World"]


def node_prefix(node: int) -> Name:
    """``/xid`` for the artifact's single node, ``/xid<k>`` for more."""
    return name_from_str("/xid" if node == 1 else f"/xid{node}")


def item_name(prefix: Name, index: int) -> Name:
    """``<prefix>/<index>`` (a generic component)."""
    return (*prefix, encode_tlv(0x08, str(index).encode()))


@dataclass
class MacFrameMeter:
    """Counts MAC data-frame transmissions (retries included) and their airtime."""

    frames: int = 0
    airtime_s: float = 0.0
    by_node: dict[int, int] = field(default_factory=dict)

    def __call__(self, event: MacEvent) -> None:
        if event.kind != "tx" or event.detail.get("frame", "data") != "data":
            return
        self.frames += 1
        self.airtime_s += float(event.detail.get("airtime_s", 0.0))
        self.by_node[event.node] = self.by_node.get(event.node, 0) + 1


def stretched(exp: Experiment, multisuperframe_s: float) -> tuple[float, float]:
    """(warm-up, tail) long enough for the schedule: every node registers (CAP, then the ACK
    in its downlink GTS) and the window's last items finish, even with long multisuperframes
    (many nodes, high SF). The artifact's 30.72 s keeps the given values."""
    return (max(exp.warmup_s, 3 * multisuperframe_s), max(exp.tail_s, 3 * multisuperframe_s))


def lora_lifetime(multisuperframe_s: float, slot_s: float) -> float:
    """PIT lifetime for Interests crossing the LoRa link: the artifact's 64 s, or a full LoRa
    round trip (next downlink GTS, then the next uplink GTS: under two multisuperframes)."""
    return max(64.0, 2 * multisuperframe_s + 2 * slot_s)


def transaction_times(exp: Experiment, node: int, warmup_s: float | None = None
                      ) -> np.ndarray:
    """Start times of one node's transactions inside the window (own seeded generator)."""
    start = exp.warmup_s if warmup_s is None else warmup_s
    return item_times(seed=exp.seed, node=node, interval_s=exp.interval_s,
                      pattern=exp.pattern, start=start, duration_s=exp.duration_s)


def experiment_profile(exp: Experiment) -> Profile:
    """The profile of ``exp`` with its CAP listen policy and energy profile, if it sets them;
    over LoRaWAN the profile's energy profile becomes the MAC's counterpart where it was
    measured on DSME (:func:`~dticn.energy.profiles.energy_profile_for_mac`)."""
    prof = get_profile(exp.profile)
    if exp.cap_rx is not None:
        prof = prof.with_(cap_rx=exp.cap_rx)
    if exp.energy_profile is not None:
        prof = prof.with_(energy_profile=exp.energy_profile)
    if exp.mac != "dsme":
        prof = prof.with_(energy_profile=energy_profile_for_mac(prof.energy_profile, exp.mac))
    return prof


def schedule_overload(exp: Experiment) -> Overload | DutyOverload | None:
    """Whether ``exp``'s nodes offer more than their MAC carries (:mod:`dticn.radio.capacity`):
    on DSME more items than their uplink GTS (one item per transaction, at the mean
    interval); on LoRaWAN class A, where a node that answers Interests sends an uplink at
    least every keep-alive period (``reach_s``), more airtime than the duty cycle allows
    for those uplinks, counted as empty frames (a lower bound: replies are larger). A push
    node's or a class B node's uplinks are its NDN packets, whose size the run decides:
    None (the run measures what the duty cycle drops)."""
    if exp.mac != "dsme":
        if exp.mac != "lorawan-a" or get_config(exp.config).pushes:
            return None
        return duty_overload(radio_scenario(exp),
                             min(keepalive_period(exp.reach_s), sum(exp.interval_s) / 2),
                             payload_bytes=0, frames="uplinks that keep the node reachable",
                             remedy="a longer keep-alive period")
    scenario = radio_scenario(exp)
    msf_s = build_context(scenario).mac.timing.multisuperframe_s
    return gts_overload(scenario, sum(exp.interval_s) / 2, msf_s)


def radio_scenario(exp: Experiment) -> Scenario:
    """The radio side of ``exp`` (:func:`dticn.lora_edge.edge_radio`), its horizon stretched with
    the MAC's period (:func:`stretched`)."""
    scenario = edge_radio(nodes=exp.nodes, seed=exp.seed, sf=exp.sf,
                          battery_mah=exp.battery_mah, mo=exp.mo, duration_s=exp.horizon_s,
                          profile=experiment_profile(exp), mac=exp.mac)
    warmup, tail = stretched(exp, edge_mac_timing(scenario, exp.reach_s)[0])
    return scenario.with_(duration_s=warmup + exp.duration_s + tail)


class World:
    """Everything of one run, wired and scheduled; :meth:`run` advances the kernel.

    ``pcap``: a path stem; the run writes ``<pcap>-lora.pcap`` (every LoRa frame, IEEE
    802.15.4) and ``<pcap>-ndn.pcap`` (every face of the gateway's forwarder, NDN over UDP
    6363), both stamped with the simulated time from 0 (:mod:`dticn.net.lora_pcap`,
    :mod:`dticn.net.pcap`). :meth:`run` flushes them, :meth:`close_traces` closes them.
    """

    def __init__(self, exp: Experiment, config: SchemeConfig | None = None, *,
                 pcap: str | None = None) -> None:
        self.exp = exp
        self.profile = profile = experiment_profile(exp)
        self.config = cfg = config or get_config(exp.config)
        self.scenario = scenario = radio_scenario(exp)
        self.horizon_s = scenario.duration_s
        self.counter = PacketCounter()
        self.log = ItemLog()
        self.mac = MacFrameMeter()
        seed = exp.seed

        def rng(role: str) -> random.Random:
            return random.Random(f"{seed}/{role}")

        msf, slot_s = edge_mac_timing(scenario, exp.reach_s)
        self.warmup_s, _ = stretched(exp, msf)
        lora_s = lora_lifetime(msf, slot_s)
        prefixes = [node_prefix(i) for i in range(1, exp.nodes + 1)]
        self.edge = edge = build_edge(scenario, cfg, prefixes, rng=rng,
                                      settings=EdgeSettings(lora_lifetime_s=lora_s,
                                                            lorawan_reach_s=exp.reach_s),
                                      counter=self.counter, log=self.log, profile=profile)
        self.radio = edge.radio
        self.kernel = kernel = edge.radio.kernel
        self.gateway_fw = edge.gateway_fw
        self.gateway_faces = edge.gateway_faces
        self.gateway_endpoint = edge.gateway_endpoint
        self.context = edge.context
        self.scheme = edge.scheme
        self.nodes: dict[int, NodeApp] = edge.nodes
        self.node_fws: dict[int, Forwarder] = edge.node_fws
        self.radio.gateway.observers.append(self.mac)
        for dev in self.radio.devices.values():
            dev.observers.append(self.mac)

        def forwarder(triple: tuple[float, float, int], role: str,
                      hooks: ForwarderHooks | None = None) -> Forwarder:
            fc = ForwarderConfig(default_retx=SchemeConfig.policy(triple),
                                 uncached_content_types=SIGNAL_CONTENT_TYPES,
                                 forward_retransmissions=profile.forward_retransmissions)
            fw = Forwarder(kernel, fc, rng=rng(role), hooks=hooks)
            if hooks is not None:
                hooks.configure(fw)
            return fw

        self.hops: list[ForwarderHooks] = (
            [] if cfg.hop_hooks is None else [cfg.hop_hooks(), cfg.hop_hooks()])
        self.consumer_fw = forwarder(cfg.consumer, "consumer",
                                     self.hops[0] if self.hops else None)
        self.middle_fw = forwarder(cfg.forwarder, "forwarder",
                                   self.hops[1] if self.hops else None)
        self.links = []
        for name, delay, (a, b) in zip(
            INTERNET_LINKS, exp.delays_s,
            ((self.consumer_fw, self.middle_fw), (self.middle_fw, self.gateway_fw)),
            strict=True,
        ):
            link = InternetLink(kernel, name, delay_s=delay, loss=exp.loss, rng=rng(name),
                                counter=self.counter, directions=("to_gateway", "to_consumer"))
            link.connect(a, b)
            self.links.append(link)
        l1, l2 = self.links
        self.gateway_fw.add_route(RNP_PREFIX, l2.b.face_id)
        for prefix in prefixes:
            self.consumer_fw.add_route(prefix, l1.a.face_id)
            self.middle_fw.add_route(prefix, l2.a.face_id)
        self.middle_fw.add_route(RNP_PREFIX, l1.b.face_id)

        # consumer
        self.consumer_endpoint = Endpoint(kernel, self.consumer_fw, rng("consumer-app"),
                                          "app://consumer")
        self.consumer = ConsumerApp(self.consumer_endpoint, self.log,
                                    behaviour=cfg.consumer_behaviour(),
                                    lifetime_s=cfg.consumer[0],
                                    deadline_s=max(cfg.deadline_s, 4 * msf))
        self._scheduled = False
        self.traces: list[LoRaTrace | PcapWriter] = []
        if pcap is not None:
            if exp.mac != "dsme":
                raise ValueError(f"pcap: LoRa frames are written as IEEE 802.15.4 (DSME); "
                                 f"{exp.mac} has no capture format here; run without pcap")
            self.traces = [trace_radio(self.radio, f"{pcap}-lora.pcap"),
                           trace_forwarder(self.gateway_fw, f"{pcap}-ndn.pcap",
                                           clock=kernel.now)]

    @property
    def forwarders(self) -> dict[str, Forwarder]:
        """Every forwarder by role (for state checks)."""
        out = {"consumer": self.consumer_fw, "forwarder": self.middle_fw,
               "gateway": self.gateway_fw}
        out.update({f"node{i}": fw for i, fw in self.node_fws.items()})
        return out

    def schedule(self) -> None:
        """Start the radio, the registrations and every transaction of the window."""
        if self._scheduled:
            return
        self._scheduled = True
        self.radio.start()
        push = self.config.pushes
        for i, app in self.nodes.items():
            if self.edge.registers:
                self.kernel.call_at(1.0 + 0.1 * i, app.register)
            prefix = node_prefix(i)
            for k, t in enumerate(transaction_times(self.exp, i, self.warmup_s)):
                name = item_name(prefix, k)
                if push:
                    self.kernel.call_at(float(t), app.push, name)
                else:
                    self.kernel.call_at(float(t), self.consumer.request, name)

    def run(self, until: float | None = None) -> None:
        """Advance virtual time (to the horizon by default)."""
        self.schedule()
        self.kernel.run(until=self.horizon_s if until is None else until)
        for trace in self.traces:
            trace.flush()

    def close_traces(self) -> None:
        """Close the pcap files (``pcap`` given); the run's frames are all in them."""
        for trace in self.traces:
            trace.close()

    def temporary_state(self) -> dict[str, int]:
        """Everything that must have expired after a quiet period (tests check it is 0)."""
        out = {f"pit:{role}": len(fw.pit) for role, fw in self.forwarders.items()}
        out.update(self.scheme.temporary_state())
        for k, h in enumerate(self.hops):
            for key, n in getattr(h, "temporary_state", lambda: {})().items():
                out[f"{key}:hop{k}"] = n
        out["pending:consumer-app"] = self.consumer_endpoint.pending_count
        out["pending:gateway-app"] = self.gateway_endpoint.pending_count
        return out
