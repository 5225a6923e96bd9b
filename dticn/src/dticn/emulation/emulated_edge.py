"""The LoRa edge behind one emulated gateway, on one EventKernel.

    [gateway forwarder + scheme] -- Internet faces: real sockets (emulation) or a
            || LoRa / DSME            simulated consumer (:mod:`dticn.emulation.predict`)
    [node fwd] - node app   (one per node)

Built by :func:`dticn.lora_edge.build_edge`, the builder the simulator's
:class:`~dticn.experiments.world.World` uses too, with the node names of an
:class:`~dticn.emulation.edge_scenario.EdgeScenario` instead of the artifact's ``/xid``.
What is on the Internet side is the caller's business; the gateway's forwarder is a plain
:class:`~dticn.forwarder.forwarder.Forwarder` in both (the emulated gateway feeds it the
frames of its sockets through :class:`~dticn.emulation.ingress.SocketIngress`).
"""

from __future__ import annotations

import random
from typing import Any

from dticn.emulation.edge_scenario import EdgeScenario
from dticn.forwarder.forwarder import Forwarder
from dticn.lora_edge import EdgeSettings, build_edge, edge_radio
from dticn.radio.context import build_context
from dticn.schemes import get as get_config
from dticn.schemes.base import SchemeConfig

STATUS_RECENT_ITEMS = 10
"""Produced items listed in the status (it must fit one NDN packet)."""
REGISTRATION_AT_S = 1.0
"""Node k sends its registration at ``REGISTRATION_AT_S + 0.1 k`` (as the World does)."""
HORIZON_S = 1e7
"""Virtual seconds the radio side is laid out for (an emulated gateway runs until stopped)."""


class Edge:
    """The gateway (forwarder + scheme + LoRa faces) and its nodes, wired on one kernel.

    ``wall_wire_scale`` (``dticn gateway --wire-time wall``): the wait hints the scheme
    answers with go on the wire in wall seconds, this many times fewer than the kernel's
    emulated ones (:meth:`dticn.schemes.gateway_base.GatewayContext.on_wire`). None: emulated
    seconds on the wire.
    """

    def __init__(self, scenario: EdgeScenario, config: SchemeConfig | None = None, *,
                 wall_wire_scale: float | None = None) -> None:
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
                           settings=EdgeSettings(gateway_pit_covers_in_records=True,
                                                 wall_wire_scale=wall_wire_scale),
                           profile=sc.profile)
        self.parts = parts
        self.radio = parts.radio
        self.kernel = parts.radio.kernel
        self.counter = parts.counter
        self.log = parts.log
        self.gateway_fw: Forwarder = parts.gateway_fw
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
