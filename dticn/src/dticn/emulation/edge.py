"""The LoRa edge behind one gateway, on one EventKernel: what both drivers run.

    [gateway forwarder + scheme] -- Internet faces: real sockets (emulation) or
            || LoRa / DSME            in-memory links (simulation)
    [node fwd] - node app   (one per node)

It is the gateway half of :class:`~dticn.experiments.world.World`, built from the same
parts (:class:`~dticn.links.lora.LoRaFace`, :class:`~dticn.schemes.gateway.GatewayContext`,
the scheme from the registry, :class:`~dticn.apps.producer.NodeApp`), with the node names
of an :class:`~dticn.emulation.scenario.EdgeScenario` instead of the artifact's ``/xid``.
What is on the Internet side is the caller's business: the emulated gateway adds socket
faces, :mod:`dticn.emulation.predict` adds a simulated consumer.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from dticn.apps.items import ItemLog
from dticn.apps.producer import NodeApp, NodePushHooks
from dticn.emulation.scenario import EdgeScenario
from dticn.experiments.params import Experiment
from dticn.experiments.world import radio_scenario
from dticn.forwarder.face import Face
from dticn.forwarder.forwarder import Forwarder, ForwarderConfig
from dticn.forwarder.hooks import ForwarderHooks
from dticn.forwarder.pit import PitEntry
from dticn.links.endpoint import Endpoint
from dticn.links.lora import GatewayRadio, LoRaFace
from dticn.links.observer import PacketCounter
from dticn.net.stream import StreamFace, UdpFace
from dticn.packets import Data, Interest
from dticn.radio.context import build_context
from dticn.radio.network import RadioNetwork
from dticn.radio.topology import GATEWAY
from dticn.schemes import get as get_config
from dticn.schemes.base import SchemeConfig
from dticn.schemes.gateway import GatewayContext, GatewayScheme
from dticn.schemes.signalling import (
    REGISTRATION_PREFIX,
    read_wait_hint,
    registration_in_cap,
    wait_hint,
)

LORA_LINK = "lora"
STATUS_RECENT_ITEMS = 10
"""Produced items listed in the status (it must fit one NDN packet)."""
REGISTRATION_AT_S = 1.0
"""Node k sends its registration at ``REGISTRATION_AT_S + 0.1 k`` (as the World does)."""


class EdgeForwarder(Forwarder):
    """The gateway's forwarder; frames from outside the kernel enter through ``ingress``.

    Socket faces deliver frames from asyncio callbacks, between kernel events. The
    real-time driver must first bring the kernel's clock to the current virtual time
    (and afterwards re-arm its timer), so ``ingress`` wraps :meth:`receive`; the simulator
    leaves it None. Frames from simulated faces arrive inside kernel events, where the
    driver's wrapper calls straight through.

    ``wall_wire_scale`` (``dticn gateway --wire-time wall``): times on the wire are wall
    seconds, the kernel's are emulated seconds ``wall_wire_scale`` times faster. The
    InterestLifetime of every Interest from a socket face is multiplied by it for the PIT
    (the relayed wire is unchanged), and wait hints this gateway's scheme answers with are
    divided by it, so an application unaware of the emulation waits the right wall time.
    Each gateway converts only what crosses its own sockets or what it generates, so
    chains of gateways never convert twice. None: the wire carries emulated time.
    """

    ingress: Callable[..., Any] | None = None
    wall_wire_scale: float | None = None

    def receive(self, face: Face, wire: bytes, _depth: int = 0) -> None:
        if self.ingress is None or _depth:
            super().receive(face, wire, _depth)
            return
        self.ingress(super().receive, face, wire, _depth)

    def on_incoming_interest(self, in_face: Face, interest: Interest) -> None:
        if self.wall_wire_scale is not None and isinstance(in_face, (StreamFace, UdpFace)):
            interest.lifetime_ms = round(interest.lifetime * 1000 * self.wall_wire_scale)
        super().on_incoming_interest(in_face, interest)

    def answer_interest(self, entry: PitEntry, data: Data, *, cache: bool = False) -> None:
        if self.wall_wire_scale is not None:
            hint = read_wait_hint(data)
            if hint is not None:
                data = wait_hint(data.name, hint / self.wall_wire_scale)
        super().answer_interest(entry, data, cache=cache)


class Edge:
    """The gateway (forwarder + scheme + LoRa faces) and its nodes, wired on one kernel."""

    def __init__(self, scenario: EdgeScenario, config: SchemeConfig | None = None) -> None:
        self.scenario = sc = scenario
        self.config = cfg = config or get_config(sc.scheme)
        # The radio side exactly as the experiments build it (artifact DSME, static GTS).
        exp = Experiment(config=sc.scheme, seed=sc.seed, nodes=sc.nodes, duration_s=1e7,
                         warmup_s=0.0, tail_s=0.0)
        self.radio_scenario = radio_scenario(exp)
        self.radio = RadioNetwork(self.radio_scenario, build_context(self.radio_scenario),
                                  traffic=False)
        self.kernel = kernel = self.radio.kernel
        self.counter = PacketCounter()
        self.log = ItemLog()
        seed = sc.seed

        def rng(role: str) -> random.Random:
            return random.Random(f"{seed}/{role}")

        # The gateway's CCN-lite lifetime (64 s) is a minimum here: an application behind a
        # socket that asks for longer (e.g. --wire-time wall: 3 wall s = 150 emulated s at
        # scale 50) keeps its PIT entry that long, as an NDN gateway would. A LoRa round
        # trip can exceed 64 s (an Interest queued behind another frame for the node's one
        # downlink GTS waits a further multisuperframe).
        fc = ForwarderConfig(default_retx=SchemeConfig.policy(cfg.gateway),
                             pit_covers_in_records=True)
        self.gateway_fw = EdgeForwarder(kernel, fc, rng=rng("gateway"))
        self.gateway_radio = GatewayRadio(self.radio.gateway)
        node_faces: dict[int, int] = {}
        for i in range(1, sc.nodes + 1):
            face = LoRaFace(self.radio.gateway, i, counter=self.counter, link=LORA_LINK,
                            direction="down", drop_queued_duplicates=True)
            node_faces[self.gateway_fw.add_face(face)] = i
            self.gateway_radio.add(face)
        self.gateway_endpoint = Endpoint(kernel, self.gateway_fw, rng("gateway-app"),
                                         "app://gw")
        self.context = GatewayContext(kernel, self.gateway_fw, self.gateway_endpoint,
                                      self.radio.gateway, node_faces, rng("gateway-scheme"))
        self.scheme: GatewayScheme = cfg.gateway_scheme(self.context)
        self.gateway_fw.hooks = self.scheme

        self.nodes: dict[int, NodeApp] = {}
        self.node_fws: dict[int, Forwarder] = {}
        for i in range(1, sc.nodes + 1):
            push: ForwarderHooks | None = NodePushHooks() if cfg.node_mode == "push" else None
            nfw = Forwarder(kernel, ForwarderConfig(
                default_retx=SchemeConfig.policy(cfg.node)), rng=rng(f"node{i}"), hooks=push)
            dev = self.radio.devices[i]
            face = LoRaFace(dev, GATEWAY, counter=self.counter, link=LORA_LINK,
                            direction="up", slot_policy=registration_in_cap)
            nfw.add_face(face)
            dev.on_receive = face.on_mac_receive
            nfw.add_route(REGISTRATION_PREFIX, face.face_id)
            ep = Endpoint(kernel, nfw, rng(f"node{i}-app"), f"app://node{i}")
            if isinstance(push, NodePushHooks):
                push.app_face_id = ep.face_id
                push.uplink = face
            self.nodes[i] = NodeApp(ep, sc.prefix(i), self.log)
            self.node_fws[i] = nfw
        self._started = False

    def start(self) -> None:
        """Start the radio, the registrations and (push schemes) every item's production."""
        if self._started:
            return
        self._started = True
        self.radio.start()
        for i, app in self.nodes.items():
            self.kernel.call_at(self.kernel.now() + REGISTRATION_AT_S + 0.1 * i, app.register)
            if self.scenario.pushes:
                self._push_next(i, self.scenario.push_schedule(i), 0)

    def _push_next(self, node: int, times: list[float], k: int) -> None:
        """Schedule item ``k`` of ``node``; each item schedules the next (one heap entry
        per node however long the schedule)."""
        if k >= len(times):
            return
        app = self.nodes[node]

        def produce() -> None:
            app.push(self.scenario.item_name(node, k))
            self._push_next(node, times, k + 1)

        self.kernel.call_at(max(times[k], self.kernel.now()), produce)

    def registered(self) -> list[str]:
        """Prefixes the gateway has registered so far."""
        from dticn.packets.name import name_to_str

        return sorted(name_to_str(p) for p in self.context.registered)

    @property
    def all_registered(self) -> bool:
        """True once every node's registration reached the gateway."""
        return len(self.context.registered) == self.scenario.nodes

    def status(self) -> dict[str, Any]:
        """Registrations, scheme counters and the node-side item log (JSON-friendly)."""
        from dticn.packets.name import name_to_str

        scheme = {k: v for k, v in vars(self.scheme).items() if isinstance(v, int)}
        items = list(self.log.items.items())
        produced = {"items": len(items), "recent": {   # bounded: the status is one packet
            name_to_str(n): {"started": it.started, "outcome": it.outcome}
            for n, it in items[-STATUS_RECENT_ITEMS:]}}
        return {"scheme": self.config.name, "nodes": self.scenario.nodes,
                "prefixes": self.scenario.node_prefixes(), "registered": self.registered(),
                "scheme_counters": scheme, "produced": produced,
                "temporary_state": self.scheme.temporary_state(),
                "lora_frames": self.counter.as_dict(),
                "forwarder": self.gateway_fw.counters.as_dict()}
