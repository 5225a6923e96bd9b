"""The artifact topology on one EventKernel, built from an :class:`Experiment`.

    consumer app - [consumer fwd] --20 ms-- [forwarder] --20 ms-- [gateway + scheme]
                                                                       || LoRa / DSME
                                                                 [node fwd] - node app

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
from dticn.apps.producer import NodeApp, NodePushHooks
from dticn.experiments.params import Experiment
from dticn.forwarder.forwarder import Forwarder, ForwarderConfig
from dticn.forwarder.hooks import ForwarderHooks
from dticn.links.endpoint import Endpoint
from dticn.links.internet import InternetLink
from dticn.links.lora import GatewayRadio, LoRaFace
from dticn.links.observer import PacketCounter
from dticn.mac.platform import MacEvent
from dticn.packets.name import Name, name_from_str
from dticn.packets.tlv import encode_tlv
from dticn.radio.context import build_context, smallest_mo_that_fits
from dticn.radio.network import RadioNetwork
from dticn.radio.scenario import Scenario
from dticn.radio.topology import GATEWAY
from dticn.schemes import get as get_config
from dticn.schemes.base import SchemeConfig
from dticn.schemes.gateway import GatewayContext, GatewayScheme
from dticn.schemes.signalling import REGISTRATION_PREFIX, RNP_PREFIX, registration_in_cap

INTERNET_LINKS = ("consumer-forwarder", "forwarder-gateway")
LORA_LINK = "lora"


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
    rng = np.random.default_rng([exp.seed, 5151, node])
    low, high = exp.interval_s
    mean = (low + high) / 2
    start = exp.warmup_s if warmup_s is None else warmup_s
    end = start + exp.duration_s
    t = start + rng.uniform(0.0, mean)
    out = []
    while t < end:
        out.append(t)
        if exp.pattern == "uniform":
            t += rng.uniform(low, high)
        elif exp.pattern == "periodic":
            t += mean
        else:
            t += rng.exponential(mean)
    return np.asarray(out)


def radio_scenario(exp: Experiment) -> Scenario:
    """The radio side of ``exp``: artifact DSME (SO 3, MO = BO = 5) unless it cannot hold
    the experiment: SO grows until a full 127-byte frame and its ACK fit one slot (higher
    spreading factors), MO until every node has an uplink and a downlink GTS. Warm-up and
    tail stretch with the multisuperframe (:func:`stretched`)."""
    so = 3
    mo = exp.mo if exp.mo is not None else 5
    while True:
        scenario = Scenario(nodes=exp.nodes, duration_s=exp.horizon_s, seed=exp.seed,
                            sf=exp.sf, downlink_gts=True, payload_bytes=116,
                            battery_mah=exp.battery_mah, so=so, mo=max(mo, so),
                            bo=max(mo, so))
        if exp.mo is None and exp.nodes > 1:
            fit = smallest_mo_that_fits(scenario)
            scenario = scenario.with_(mo=fit, bo=fit)
        try:
            ctx = build_context(scenario)
        except ValueError as exc:
            if "slot" in str(exc) and so < 8:
                so += 1
                continue
            raise
        warmup, tail = stretched(exp, ctx.mac.timing.multisuperframe_s)
        return scenario.with_(duration_s=warmup + exp.duration_s + tail)


class World:
    """Everything of one run, wired and scheduled; :meth:`run` advances the kernel."""

    def __init__(self, exp: Experiment, config: SchemeConfig | None = None) -> None:
        self.exp = exp
        self.config = cfg = config or get_config(exp.config)
        self.scenario = scenario = radio_scenario(exp)
        self.radio = RadioNetwork(scenario, build_context(scenario), traffic=False)
        self.horizon_s = scenario.duration_s
        timing = self.radio.ctx.mac.timing
        msf = timing.multisuperframe_s
        self.warmup_s, _ = stretched(exp, msf)
        lora_s = lora_lifetime(msf, timing.slot_s)
        self.kernel = kernel = self.radio.kernel
        self.counter = PacketCounter()
        self.log = ItemLog()
        self.mac = MacFrameMeter()
        seed = exp.seed

        def rng(role: str) -> random.Random:
            return random.Random(f"{seed}/{role}")

        def forwarder(triple: tuple[float, float, int], role: str,
                      hooks: ForwarderHooks | None = None) -> Forwarder:
            fc = ForwarderConfig(default_retx=SchemeConfig.policy(triple))
            return Forwarder(kernel, fc, rng=rng(role), hooks=hooks)

        def lora_side(triple: tuple[float, float, int]) -> tuple[float, float, int]:
            # gateway and node keep PIT entries for a whole LoRa round trip
            return (max(triple[0], lora_s), triple[1], triple[2])

        self.hops: list[ForwarderHooks] = []

        def hop() -> ForwarderHooks | None:
            if cfg.hop_hooks is None:
                return None
            h = cfg.hop_hooks()
            self.hops.append(h)
            return h

        self.consumer_fw = forwarder(cfg.consumer, "consumer", hop())
        self.middle_fw = forwarder(cfg.forwarder, "forwarder", hop())
        self.gateway_fw = forwarder(lora_side(cfg.gateway), "gateway")
        for fw, h in ((self.consumer_fw, self.hops[0] if self.hops else None),
                      (self.middle_fw, self.hops[1] if self.hops else None)):
            if h is not None:
                h.attach(fw)  # type: ignore[attr-defined]
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

        # gateway: LoRa faces, its own endpoint, the scheme as forwarder hooks
        self.gateway_radio = GatewayRadio(self.radio.gateway)
        self.radio.gateway.observers.append(self.mac)
        node_faces: dict[int, int] = {}
        self.gateway_faces: dict[int, LoRaFace] = {}
        for i in range(1, exp.nodes + 1):
            face = LoRaFace(self.radio.gateway, i, counter=self.counter, link=LORA_LINK,
                            direction="down", drop_queued_duplicates=True)
            node_faces[self.gateway_fw.add_face(face)] = i
            self.gateway_radio.add(face)
            self.gateway_faces[i] = face
        self.gateway_endpoint = Endpoint(kernel, self.gateway_fw, rng("gateway-app"), "app://gw")
        self.context = GatewayContext(kernel, self.gateway_fw, self.gateway_endpoint,
                                      self.radio.gateway, node_faces, rng("gateway-scheme"),
                                      lora_interest_lifetime_s=lora_s)
        self.scheme: GatewayScheme = cfg.gateway_scheme(self.context)
        self.gateway_fw.hooks = self.scheme
        self.gateway_fw.add_route(RNP_PREFIX, l2.b.face_id)

        # nodes
        self.nodes: dict[int, NodeApp] = {}
        self.node_fws: dict[int, Forwarder] = {}
        for i in range(1, exp.nodes + 1):
            push = NodePushHooks() if cfg.node_mode == "push" else None
            nfw = forwarder(lora_side(cfg.node), f"node{i}", push)
            dev = self.radio.devices[i]
            dev.observers.append(self.mac)
            face = LoRaFace(dev, GATEWAY, counter=self.counter, link=LORA_LINK, direction="up",
                            slot_policy=registration_in_cap)
            nfw.add_face(face)
            dev.on_receive = face.on_mac_receive
            nfw.add_route(REGISTRATION_PREFIX, face.face_id)
            ep = Endpoint(kernel, nfw, rng(f"node{i}-app"), f"app://node{i}")
            if push is not None:
                push.app_face_id = ep.face_id
                push.uplink = face
            self.nodes[i] = NodeApp(ep, node_prefix(i), self.log,
                                    registration_lifetime_s=lora_s)
            self.node_fws[i] = nfw
            self.consumer_fw.add_route(node_prefix(i), l1.a.face_id)
            self.middle_fw.add_route(node_prefix(i), l2.a.face_id)
        self.middle_fw.add_route(RNP_PREFIX, l1.b.face_id)

        # consumer
        self.consumer_endpoint = Endpoint(kernel, self.consumer_fw, rng("consumer-app"),
                                          "app://consumer")
        self.consumer = ConsumerApp(self.consumer_endpoint, self.log, mode=cfg.consumer_mode,
                                    lifetime_s=cfg.consumer[0],
                                    deadline_s=max(cfg.deadline_s, 4 * msf))
        self._scheduled = False

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
        push = self.config.node_mode == "push"
        for i, app in self.nodes.items():
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
