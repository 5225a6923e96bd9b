"""What every gateway scheme shares: node registration, the node table, the gateway's own
endpoint, and the MAC timing it can read (DSME's schedule or LoRaWAN's receive windows,
:mod:`dticn.schemes.mac_timing`).

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
from dticn.links.app_endpoint import Endpoint
from dticn.packets import Data, Interest
from dticn.packets.name import Name
from dticn.schemes.mac_timing import MacTiming
from dticn.schemes.signalling import GATEWAY_NAME, REGISTRATION_PREFIX, ack
from dticn.sim.kernel import EventKernel


@dataclass
class GatewayContext:
    """What a scheme may use: the clock, its own endpoint, its LoRa faces, the MAC timing.

    Everything is given at construction, before the forwarder exists: the scheme is built
    on the context and becomes the forwarder's hooks at the forwarder's construction, so
    the context never holds the forwarder (every hook is handed it). ``endpoint`` is the
    gateway's own application (its requests to nodes, its push notifications), built
    without a forwarder; ``node_faces`` maps the gateway's LoRa faces to node MAC
    addresses. The edge builder adds both to the forwarder before any packet moves.
    ``gateway_name`` is the one-component name this gateway puts into reflexive names.
    ``wall_wire_scale``: durations this gateway puts in packets go on the wire in wall
    seconds, this many times fewer than the kernel's (an emulated gateway's ``--wire-time
    wall``, see :meth:`on_wire`); None: the kernel's seconds.
    """

    kernel: EventKernel
    mac: MacTiming
    rng: random.Random
    endpoint: Endpoint
    node_faces: dict[Face, int]
    gateway_name: Name = GATEWAY_NAME
    lora_interest_lifetime_s: float = 64.0
    reflexive_lifetime_s: float = 10.0
    static_hint_s: float | None = None
    item_freshness_ms: int = 3_600_000
    wall_wire_scale: float | None = None
    registered: dict[Name, Face] = field(default_factory=dict)
    """Registered node prefixes -> the LoRa face behind which the node is."""

    def on_wire(self, seconds: float) -> float:
        """``seconds`` of the kernel's time as a duration in a packet this gateway makes
        (a wait hint): unchanged, or in wall seconds under ``wall_wire_scale``, so an
        application unaware of the emulation waits the right wall time."""
        if self.wall_wire_scale is None:
            return seconds
        return seconds / self.wall_wire_scale

    def node_of(self, name: Name) -> tuple[Name, Face] | None:
        """(prefix, LoRa face) of the registered node whose prefix covers ``name``."""
        for length in range(len(name), 0, -1):
            face = self.registered.get(name[:length])
            if face is not None:
                return name[:length], face
        return None

    def node(self, face: Face) -> int:
        """MAC address of the node behind the gateway's LoRa face ``face``."""
        return self.node_faces[face]


class GatewayScheme(ForwarderHooks):
    """Base scheme: registration only; subclasses add their retrieval behaviour."""

    name = "base"

    def __init__(self, ctx: GatewayContext, hop: ForwarderHooks | None = None) -> None:
        self.ctx = ctx
        self.hop = hop
        self.registrations = 0

    def configure(self, fw: Forwarder) -> None:
        if self.hop is not None:
            self.hop.configure(fw)

    def is_node_face(self, face: Face) -> bool:
        """True for the gateway's LoRa faces."""
        return face in self.ctx.node_faces

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
        self.install_node(fw, prefix, in_face)
        self.registrations += 1
        fw.answer_interest(entry, ack(interest.name))

    def install_node(self, fw: Forwarder, prefix: Name, face: Face) -> None:
        """Know ``prefix`` as a node's behind LoRa face ``face`` and route it there (on
        registration, or from the start where the node prefixes are static routes)."""
        self.ctx.registered[prefix] = face
        fw.add_route(prefix, face.face_id)

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
