"""The LoRa edge behind one emulated gateway, on one EventKernel.

    [gateway forwarder + scheme] -- Internet faces: real sockets (emulation) or a
            || LoRa / DSME            simulated consumer (:mod:`dticn.emulation.predict`)
    [node fwd] - node app   (one per node)

Built by :func:`dticn.edge.build_edge`, the builder the simulator's
:class:`~dticn.experiments.world.World` uses too, with the node names of an
:class:`~dticn.emulation.scenario.EdgeScenario` instead of the artifact's ``/xid``.
What is on the Internet side is the caller's business.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from dticn.edge import EdgeSettings, build_edge, edge_radio
from dticn.emulation.scenario import EdgeScenario
from dticn.forwarder.face import Face
from dticn.forwarder.forwarder import Forwarder, ForwarderConfig
from dticn.forwarder.hooks import ForwarderHooks
from dticn.forwarder.pit import PitEntry
from dticn.net.stream import StreamFace, UdpFace
from dticn.packets import Data, Interest
from dticn.radio.context import build_context
from dticn.schemes import get as get_config
from dticn.schemes.base import SchemeConfig
from dticn.schemes.signalling import read_wait_hint, wait_hint
from dticn.sim.kernel import EventKernel

STATUS_RECENT_ITEMS = 10
"""Produced items listed in the status (it must fit one NDN packet)."""
REGISTRATION_AT_S = 1.0
"""Node k sends its registration at ``REGISTRATION_AT_S + 0.1 k`` (as the World does)."""
HORIZON_S = 1e7
"""Virtual seconds the radio side is laid out for (an emulated gateway runs until stopped)."""


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

    @classmethod
    def build(cls, kernel: EventKernel, config: ForwarderConfig, hooks: ForwarderHooks,
              rng: random.Random) -> EdgeForwarder:
        """The :data:`dticn.edge.GatewayForwarderFactory` of the emulated gateway."""
        return cls(kernel, config, rng=rng, hooks=hooks)

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
        super().answer_interest(entry, self._on_wire(data), cache=cache)

    def answer_in_record(self, entry: PitEntry, face_id: int, data: Data) -> None:
        super().answer_in_record(entry, face_id, self._on_wire(data))

    def _on_wire(self, data: Data) -> Data:
        """A wait hint this gateway generates, in the wire's time (see the class doc)."""
        if self.wall_wire_scale is not None:
            hint = read_wait_hint(data)
            if hint is not None:
                return wait_hint(data.name, hint / self.wall_wire_scale)
        return data


class Edge:
    """The gateway (forwarder + scheme + LoRa faces) and its nodes, wired on one kernel."""

    def __init__(self, scenario: EdgeScenario, config: SchemeConfig | None = None) -> None:
        self.scenario = sc = scenario
        self.config = cfg = config or get_config(sc.scheme)
        # The radio side exactly as the experiments build it (artifact DSME, static GTS).
        base = edge_radio(nodes=sc.nodes, seed=sc.seed, profile=sc.profile)
        msf = build_context(base).mac.timing.multisuperframe_s
        self.radio_scenario = base.with_(duration_s=3 * msf + HORIZON_S + 3 * msf)

        def rng(role: str) -> random.Random:
            return random.Random(f"{sc.seed}/{role}")

        # The gateway's CCN-lite lifetime (64 s) is a minimum here: an application behind a
        # socket that asks for longer (e.g. --wire-time wall: 3 wall s = 150 emulated s at
        # scale 50) keeps its PIT entry that long, as an NDN gateway would. A LoRa round
        # trip can exceed 64 s (an Interest queued behind another frame for the node's one
        # downlink GTS waits a further multisuperframe).
        parts = build_edge(self.radio_scenario, cfg,
                           [sc.prefix(i) for i in range(1, sc.nodes + 1)], rng=rng,
                           settings=EdgeSettings(gateway_pit_covers_in_records=True),
                           gateway_fw=EdgeForwarder.build, profile=sc.profile)
        self.parts = parts
        self.radio = parts.radio
        self.kernel = parts.radio.kernel
        self.counter = parts.counter
        self.log = parts.log
        self.gateway_fw: EdgeForwarder = parts.gateway_fw  # type: ignore[assignment]
        self.gateway_radio_faces = parts.gateway_faces
        self.gateway_endpoint = parts.gateway_endpoint
        self.context = parts.context
        self.scheme = parts.scheme
        self.bypass = parts.bypass
        """Names the scheme leaves to the strategy (management, static routes)."""
        self.nodes = parts.nodes
        self.node_fws = parts.node_fws
        self._started = False

    def start(self) -> None:
        """Start the radio, the registrations and (push schemes) every item's production."""
        if self._started:
            return
        self._started = True
        self.radio.start()
        for i, app in self.nodes.items():
            if self.parts.registers:
                self.kernel.call_at(self.kernel.now() + REGISTRATION_AT_S + 0.1 * i,
                                    app.register)
            if self.config.pushes:
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
        return {"scheme": self.config.name, "profile": self.parts.profile.name,
                "nodes": self.scenario.nodes,
                "prefixes": self.scenario.node_prefixes(), "registered": self.registered(),
                "scheme_counters": scheme, "produced": produced,
                "temporary_state": self.scheme.temporary_state(),
                "lora_frames": self.counter.as_dict(),
                "forwarder": self.gateway_fw.counters.as_dict()}
