"""What every gateway scheme shares: node registration, the node table, the gateway's own
endpoint, and the DSME schedule it can read.

A scheme is a :class:`~dticn.forwarder.hooks.ForwarderHooks` of the gateway's forwarder
(the core's pipelines stay untouched). The steps every scheme runs first:

1. ``/reg/<id>`` Interest from a LoRa face (sent by the node in the CAP): remember
   ``/<id>`` -> that face, install the FIB route ``/<id>`` to it, answer with an ACK Data
   (NDN signalling, see :mod:`dticn.schemes.signalling`).
2. Anything else: the scheme's :meth:`GatewayScheme.on_request` (RICE answers here), then
   the per-hop reflexive behaviour if the scheme has one (push-draft), else the strategy.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from dticn.forwarder.face import Face
from dticn.forwarder.forwarder import Forwarder
from dticn.forwarder.hooks import ForwarderHooks, UnsolicitedDataVerdict
from dticn.forwarder.pit import PitEntry
from dticn.links.endpoint import Endpoint
from dticn.mac.coordinator import DsmeCoordinator
from dticn.mac.gts import Direction
from dticn.packets import Data, Interest
from dticn.packets.name import Name
from dticn.phy.airtime import time_on_air
from dticn.schemes.signalling import GATEWAY_NAME, REGISTRATION_PREFIX, ack
from dticn.sim.kernel import EventKernel


@dataclass
class GatewayContext:
    r"""What a scheme may use: the clock, its forwarder, its own endpoint, the MAC schedule.

    The scheme is built first (it becomes the forwarder's hooks at the forwarder's
    construction); the edge builder then :meth:`bind`\ s the forwarder, the gateway's own
    endpoint on it and ``node_faces`` (the gateway's LoRa face ids -> node MAC addresses)
    before any packet moves. ``gateway_name`` is the one-component name this gateway puts
    into reflexive names. ``wall_wire_scale``: durations this gateway puts in packets go
    on the wire in wall seconds, this many times fewer than the kernel's (an emulated
    gateway's ``--wire-time wall``, see :meth:`on_wire`); None: the kernel's seconds.
    """

    kernel: EventKernel
    coordinator: DsmeCoordinator
    rng: random.Random
    gateway_name: Name = GATEWAY_NAME
    lora_interest_lifetime_s: float = 64.0
    reflexive_lifetime_s: float = 10.0
    static_hint_s: float | None = None
    item_freshness_ms: int = 3_600_000
    wall_wire_scale: float | None = None
    registered: dict[Name, int] = field(default_factory=dict)
    node_faces: dict[int, int] = field(default_factory=dict)
    _forwarder: Forwarder | None = None
    _endpoint: Endpoint | None = None

    def bind(self, forwarder: Forwarder, endpoint: Endpoint, node_faces: dict[int, int]
             ) -> None:
        """Give the scheme its forwarder, its endpoint and the LoRa faces (once)."""
        if self._forwarder is not None:
            raise RuntimeError("GatewayContext.bind called twice: one context per gateway")
        self._forwarder = forwarder
        self._endpoint = endpoint
        self.node_faces.update(node_faces)

    @property
    def forwarder(self) -> Forwarder:
        if self._forwarder is None:
            raise RuntimeError("the scheme used its forwarder before the edge builder bound "
                               "it; build the edge with dticn.edge.build_edge")
        return self._forwarder

    @property
    def endpoint(self) -> Endpoint:
        if self._endpoint is None:
            raise RuntimeError("the scheme used its endpoint before the edge builder bound "
                               "it; build the edge with dticn.edge.build_edge")
        return self._endpoint

    def on_wire(self, seconds: float) -> float:
        """``seconds`` of the kernel's time as a duration in a packet this gateway makes
        (a wait hint): unchanged, or in wall seconds under ``wall_wire_scale``, so an
        application unaware of the emulation waits the right wall time."""
        if self.wall_wire_scale is None:
            return seconds
        return seconds / self.wall_wire_scale

    def node_of(self, name: Name) -> tuple[Name, int] | None:
        """(prefix, face id) of the registered node whose prefix covers ``name``."""
        for length in range(len(name), 0, -1):
            face_id = self.registered.get(name[:length])
            if face_id is not None:
                return name[:length], face_id
        return None

    # -- the DSME schedule (what the RICE-schedule hint reads) -------------------------
    def next_slot(self, face_id: int, direction: Direction, after: float) -> float:
        """Start of the node's next GTS in ``direction`` at or after ``after``."""
        node = self.node_faces[face_id]
        when = self.coordinator.next_slot_time(node, direction, after)
        if when is None:
            raise ValueError(f"node {node} has no {direction} GTS; allocate one in the scenario")
        return when

    def airtime(self, payload_bytes: int) -> float:
        """LoRa time on air of a MAC data frame carrying ``payload_bytes``."""
        coord = self.coordinator
        return time_on_air(coord.p.phy, payload_bytes + coord.cfg.data_overhead)

    def downlink_backlog(self, face_id: int) -> int:
        """Frames already queued for the node's downlink GTS."""
        return len(self.coordinator.downlink_queues.get(self.node_faces[face_id], ()))


class GatewayScheme(ForwarderHooks):
    """Base scheme: registration only; subclasses add their retrieval behaviour."""

    name = "base"

    def __init__(self, ctx: GatewayContext, hop: ForwarderHooks | None = None) -> None:
        self.ctx = ctx
        self.hop = hop
        self.registrations = 0

    def bound(self) -> None:
        """Called once the context holds the forwarder and the endpoint: set up tables."""

    def is_node_face(self, face: Face) -> bool:
        """True for the gateway's LoRa faces."""
        return face.face_id in self.ctx.node_faces

    def on_interest_propagate(self, fw: Forwarder, in_face: Face, interest: Interest,
                              entry: PitEntry) -> bool:
        if interest.name[:1] == REGISTRATION_PREFIX and self.is_node_face(in_face):
            self._register(fw, in_face, interest, entry)
            return True
        if self.on_request(fw, in_face, interest, entry):
            return True
        if self.hop is not None:
            return self.hop.on_interest_propagate(fw, in_face, interest, entry)
        return False

    def _register(self, fw: Forwarder, in_face: Face, interest: Interest,
                  entry: PitEntry) -> None:
        prefix = interest.name[1:2]
        if not prefix:
            fw.counters.drop("registration_without_id")
            fw.reject_pending_interest(entry)
            return
        self.install_node(fw, prefix, in_face.face_id)
        self.registrations += 1
        fw.answer_interest(entry, ack(interest.name))

    def install_node(self, fw: Forwarder, prefix: Name, face_id: int) -> None:
        """Know ``prefix`` as a node's behind LoRa face ``face_id`` and route it there (on
        registration, or from the start where the node prefixes are static routes)."""
        self.ctx.registered[prefix] = face_id
        fw.add_route(prefix, face_id)

    def on_request(self, fw: Forwarder, in_face: Face, interest: Interest,
                   entry: PitEntry) -> bool:
        """Scheme hook for every non-registration Interest; True when handled."""
        return False

    def on_unsolicited_data(self, fw: Forwarder, in_face: Face, data: Data) -> str:
        return UnsolicitedDataVerdict.DROP

    def on_reflexive_interest(self, fw: Forwarder, in_face: Face, interest: Interest) -> bool:
        if self.hop is not None:
            return self.hop.on_reflexive_interest(fw, in_face, interest)
        return False

    def temporary_state(self) -> dict[str, int]:
        """Counts of scheme state that must expire (checked by the scenario tests)."""
        return {}
