"""The LoRa edge, built once for both drivers: a gateway forwarder running a scheme, one LoRa
face per node, and behind each node its forwarder and application.

    [gateway forwarder + scheme] -- Internet side: the caller's (in-memory links in the
            || LoRa / DSME or LoRaWAN  simulator, sockets in the emulated gateway)
    [node fwd] - node app   (one per node)

:class:`~dticn.experiments.world.World` (simulation) and
:class:`~dticn.emulation.emulated_edge.Edge` (emulation) differ only in what they put on the
Internet side and in a few settings (:class:`EdgeSettings`); everything they share is here:
the radio side (:func:`edge_radio`), the wiring (:func:`build_edge`) and the traffic draw
(:func:`item_times`).

The MAC below the LoRa faces is the paper's DSME or LoRaWAN class A/B
(:mod:`dticn.mac.lorawan`): both speak the same send/receive interface, and the schemes
read the MAC's timing through :mod:`dticn.schemes.mac_timing`. Over LoRaWAN a node is
reachable only in the receive windows after its own uplinks, so nodes that answer
Interests (the pull schemes) send an empty uplink every ``report_s`` in which they sent
nothing (:data:`LORAWAN_REPORT_S`); a push node sends only its items.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from dticn.apps.items import ItemLog
from dticn.apps.producer import NodeApp
from dticn.edge_profiles import Profile, get_profile
from dticn.energy.profiles import energy_profile_for_mac
from dticn.forwarder.face import Face
from dticn.forwarder.forwarder import Forwarder
from dticn.forwarder.hooks import ForwarderHooks
from dticn.forwarder.pit import PitEntry
from dticn.forwarder.settings import ForwarderConfig
from dticn.links.app_endpoint import Endpoint
from dticn.links.lora import GatewayRadio, LoRaFace
from dticn.links.observer import PacketCounter
from dticn.mac.lorawan_config import MAC_NAMES, LorawanConfig
from dticn.packets import Data, Interest
from dticn.packets.name import Name, is_prefix
from dticn.radio.context import SlotTooShort, build_context, smallest_mo_that_fits
from dticn.radio.lorawan_network import LorawanNetwork, build_lorawan_context
from dticn.radio.network import RadioNetwork
from dticn.radio.scenario import Scenario
from dticn.radio.topology import GATEWAY
from dticn.schemes.base import SchemeConfig, Triple
from dticn.schemes.gateway_base import GatewayContext, GatewayScheme
from dticn.schemes.mac_timing import ClassBTiming, DsmeTiming, LorawanTiming, MacTiming
from dticn.schemes.signalling import (
    REGISTRATION_PREFIX,
    SIGNAL_CONTENT_TYPES,
    registration_in_cap,
)

LORA_LINK = "lora"
"""Link label of LoRa frames in the :class:`~dticn.links.observer.PacketCounter`."""
ARTIFACT_SO = 3
ARTIFACT_MO = 5
MAX_SO = 8
LORAWAN_REPORT_S = 30.72
"""A pull node's LoRaWAN keep-alive period: the artifact's multisuperframe (SO 3, MO 5 in
the artifact's ``external_modules/makefiles/board.mk``; 30.72 s, docs/dticn-facts.md), so
a class A node is as reachable as a DSME node with one downlink GTS per multisuperframe."""
EDGE_PING_PERIODICITY = 5
"""Class B edge nodes open a ping slot every 2^5 x 0.96 s = 30.72 s (LoRaWAN 1.0.3 section
13.1), the artifact's multisuperframe: as reachable as the DSME node and the class A node
with its keep-alive, with no uplink to pay for it."""
LORAWAN_CONFIRMED = True
"""Edge uplinks ask for an ACK (retransmitted up to the configured count), as every DSME
GTS frame is acknowledged; keep-alives do not."""


def edge_radio(*, nodes: int, seed: int, sf: int = 7, battery_mah: float | None = None,
               mo: int | None = None, duration_s: float = 3600.0,
               profile: str | Profile = "model", mac: str = "dsme") -> Scenario:
    """The radio side of an edge: artifact DSME (SO 3, MO = BO = 5, static GTS, one uplink
    and one downlink slot per node, 116-byte frames) unless it cannot hold the edge: SO grows
    until a full frame and its ACK fit one slot (higher spreading factors), MO until every
    node has its two GTS (``mo`` None; several nodes). The profile places the GTS, sets the
    duty cycle and the node's listen policy.

    ``mac`` ``lorawan-a``/``lorawan-b``: the same nodes on LoRaWAN, frames up to the data
    rate's maximum payload, confirmed uplinks (:data:`LORAWAN_CONFIRMED`); the profile's
    energy profile where it applies to that MAC, else the MAC's measured one
    (:func:`~dticn.energy.profiles.energy_profile_for_mac`)."""
    prof = get_profile(profile)
    if mac not in MAC_NAMES:
        raise ValueError(f"mac={mac!r}: use one of {', '.join(MAC_NAMES)}")
    if mac != "dsme":
        if mo is not None:
            raise ValueError(f"mo={mo}: a DSME multisuperframe order; LoRaWAN ({mac}) has "
                             "no schedule to size")
        return Scenario(nodes=nodes, duration_s=duration_s, seed=seed, sf=sf,
                        payload_bytes=LorawanConfig.load().max_payload(sf),
                        battery_mah=battery_mah, mac=mac, confirmed=LORAWAN_CONFIRMED,
                        enforce_duty_cycle=prof.enforce_duty_cycle,
                        energy_profile=energy_profile_for_mac(prof.energy_profile, mac))
    so = ARTIFACT_SO
    order = mo if mo is not None else ARTIFACT_MO
    while True:
        scenario = Scenario(nodes=nodes, duration_s=duration_s, seed=seed, sf=sf,
                            downlink_gts=True, payload_bytes=116, battery_mah=battery_mah,
                            so=so, mo=max(order, so), bo=max(order, so),
                            allocator=prof.allocator,
                            enforce_duty_cycle=prof.enforce_duty_cycle, cap_rx=prof.cap_rx,
                            energy_profile=prof.energy_profile)
        if mo is None and nodes > 1:
            fit = smallest_mo_that_fits(scenario)
            scenario = scenario.with_(mo=fit, bo=fit)
        try:
            build_context(scenario)
        except SlotTooShort:
            if so < MAX_SO:
                so += 1
                continue
            raise
        return scenario


def edge_mac_timing(scenario: Scenario, reach_s: float | None = None
                    ) -> tuple[float, float]:
    """(period, slot) of ``scenario``'s MAC, for sizing warm-up, tails and LoRa PIT
    lifetimes: DSME's multisuperframe and GTS; LoRaWAN's reachability period (``reach_s``,
    default :data:`LORAWAN_REPORT_S`) and the end of its second receive window."""
    if scenario.mac == "dsme":
        timing = build_context(scenario).mac.timing
        return timing.multisuperframe_s, timing.slot_s
    if scenario.mac == "lorawan-b":
        cfg = edge_lorawan_config(reach_s)
        return cfg.ping_period_s(), cfg.receive_delay2_s
    return keepalive_period(reach_s), edge_lorawan_config().receive_delay2_s


def keepalive_period(reach_s: float | None) -> float:
    """A pulled class A node's keep-alive period: ``reach_s``, or
    :data:`LORAWAN_REPORT_S` when unset."""
    return LORAWAN_REPORT_S if reach_s is None else reach_s


def edge_lorawan_config(reach_s: float | None = None) -> LorawanConfig:
    """The EU868 settings with the edge's ping period (``reach_s``, default
    :data:`EDGE_PING_PERIODICITY`; ValueError for a period class B lacks)."""
    if reach_s is None:
        return LorawanConfig.load(ping_slot_periodicity=EDGE_PING_PERIODICITY)
    return LorawanConfig.load(
        ping_slot_periodicity=LorawanConfig.load().periodicity_for(reach_s))


def _edge_mac(scenario: Scenario, *, pushes: bool, reach_s: float | None = None
              ) -> tuple[RadioNetwork | LorawanNetwork, MacTiming]:
    """The radio network of ``scenario`` without its own traffic, and its timing for the
    scheme. Class A pull nodes keep alive every ``reach_s`` (default
    :data:`LORAWAN_REPORT_S`); push nodes need no keep-alive (everything they are sent
    answers one of their uplinks), nor do class B nodes (their ping slots, every
    ``reach_s``, make them reachable)."""
    if scenario.mac == "dsme":
        dsme = RadioNetwork(scenario, build_context(scenario), traffic=False)
        return dsme, DsmeTiming(dsme.gateway)
    if scenario.mac == "lorawan-b":
        ctx = build_lorawan_context(scenario, edge_lorawan_config(reach_s))
        class_b = LorawanNetwork(scenario, ctx, traffic=False)
        return class_b, ClassBTiming(class_b.gateway)
    report_s = keepalive_period(reach_s)
    ctx = build_lorawan_context(scenario, edge_lorawan_config())
    lorawan = LorawanNetwork(scenario, ctx, traffic=False,
                             report_s=None if pushes else report_s)
    return lorawan, LorawanTiming(lorawan.gateway, report_s)


def item_times(*, seed: int, node: int, interval_s: tuple[float, float], pattern: str,
               start: float, duration_s: float) -> np.ndarray:
    """Start times of one node's items in ``[start, start + duration_s)``, from the node's own
    generator: the first after U(0, mean), then gaps U(low, high) (``uniform``), the mean
    (``periodic``) or exponential of the mean (``poisson``)."""
    rng = np.random.default_rng([seed, 5151, node])
    low, high = interval_s
    mean = (low + high) / 2
    end = start + duration_s
    t = start + rng.uniform(0.0, mean)
    out = []
    while t < end:
        out.append(t)
        if pattern == "uniform":
            t += rng.uniform(low, high)
        elif pattern == "periodic":
            t += mean
        else:
            t += rng.exponential(mean)
    return np.asarray(out)


@dataclass(frozen=True)
class EdgeSettings:
    """What the two drivers set differently.

    Args:
        lora_lifetime_s: PIT lifetime for Interests crossing the LoRa link (gateway and node
            keep entries at least this long) and the nodes' registration lifetime; None: the
            configuration's triples unchanged and 64 s registrations.
        gateway_pit_covers_in_records: the gateway keeps a PIT entry as long as its
            longest in-record (an application behind a socket may ask for more than 64 s).
        wall_wire_scale: the scheme's wait hints go on the wire in wall seconds, this many
            times fewer than the kernel's (the emulated gateway's ``--wire-time wall``);
            None: in the kernel's seconds.
        lorawan_reach_s: a LoRaWAN node's reachability period (class A keep-alive, class
            B ping period); None: :data:`LORAWAN_REPORT_S`.
    """

    lora_lifetime_s: float | None = None
    gateway_pit_covers_in_records: bool = False
    wall_wire_scale: float | None = None
    lorawan_reach_s: float | None = None


@dataclass
class EdgeParts:
    """The built edge; the caller adds the Internet side and starts it."""

    radio: RadioNetwork | LorawanNetwork
    config: SchemeConfig
    gateway_fw: Forwarder
    gateway_endpoint: Endpoint
    context: GatewayContext
    scheme: GatewayScheme
    gateway_faces: dict[int, LoRaFace]
    nodes: dict[int, NodeApp]
    node_fws: dict[int, Forwarder]
    counter: PacketCounter
    log: ItemLog
    bypass: list[Name] = field(default_factory=list)
    profile: Profile = field(default_factory=lambda: get_profile("model"))
    registers: bool = True
    """False: the node prefixes are static routes at the gateway; do not send ``/reg``."""


class BypassPrefixes(ForwarderHooks):
    """The scheme's hooks, except for names the gateway serves otherwise (management,
    static routes to another gateway): those go to the strategy. ``prefixes`` is data the
    owner may extend while running; the composition itself never changes."""

    def __init__(self, scheme: ForwarderHooks, prefixes: list[Name]) -> None:
        self.scheme = scheme
        self.prefixes = prefixes

    def on_interest_propagate(self, fw: Forwarder, in_face: Face, interest: Interest,
                              entry: PitEntry) -> bool:
        if any(is_prefix(p, interest.name) for p in self.prefixes):
            return False
        return self.scheme.on_interest_propagate(fw, in_face, interest, entry)

    def on_unsolicited_data(self, fw: Forwarder, in_face: Face, data: Data) -> str:
        return self.scheme.on_unsolicited_data(fw, in_face, data)

    def on_reflexive_interest(self, fw: Forwarder, in_face: Face, interest: Interest) -> bool:
        return self.scheme.on_reflexive_interest(fw, in_face, interest)

    def configure(self, fw: Forwarder) -> None:
        self.scheme.configure(fw)


def build_edge(scenario: Scenario, config: SchemeConfig, prefixes: Sequence[Name], *,
               rng: Callable[[str], random.Random], settings: EdgeSettings = EdgeSettings(),
               counter: PacketCounter | None = None, log: ItemLog | None = None,
               profile: str | Profile = "model") -> EdgeParts:
    """Wire the gateway and ``len(prefixes)`` nodes on ``scenario``'s radio network.

    Order (nothing is bound after it is built): the gateway's LoRa faces and its own
    endpoint, then the scheme's context holding them, the scheme on it, the gateway
    forwarder with the scheme as its hooks (behind :class:`BypassPrefixes`); the forwarder
    then adds the faces and lets the hooks :meth:`~ForwarderHooks.configure` its tables.
    Each node: its LoRa face, its hooks given that face, its forwarder with the hooks.
    The profile sets the hint, the reflexive lifetime, the item Data, whether downstream
    retransmissions go upstream again, and whether the node prefixes are static routes
    (then nodes register only in push configurations: ``EdgeParts.registers``).
    """
    prof = get_profile(profile)
    radio, timing = _edge_mac(scenario, pushes=config.pushes,
                              reach_s=settings.lorawan_reach_s)
    kernel = radio.kernel
    counter = counter if counter is not None else PacketCounter()
    log = log if log is not None else ItemLog()
    lora_s = settings.lora_lifetime_s

    def lora_side(triple: Triple) -> Triple:
        # gateway and node keep PIT entries for a whole LoRa round trip
        return triple if lora_s is None else (max(triple[0], lora_s), triple[1], triple[2])

    gateway_faces = {i: LoRaFace(radio.gateway, i, counter=counter, link=LORA_LINK,
                                 direction="down", drop_queued_duplicates=True)
                     for i in range(1, len(prefixes) + 1)}
    endpoint = Endpoint(kernel, None, rng("gateway-app"), "app://gw")
    context = GatewayContext(kernel, timing, rng("gateway-scheme"), endpoint,
                             {face: i for i, face in gateway_faces.items()},
                             lora_interest_lifetime_s=lora_s if lora_s is not None else 64.0,
                             reflexive_lifetime_s=prof.reflexive_lifetime_s,
                             static_hint_s=prof.hint_s,
                             wall_wire_scale=settings.wall_wire_scale)
    scheme = config.gateway_scheme(context)
    bypass: list[Name] = []
    hooks = BypassPrefixes(scheme, bypass)
    fc = ForwarderConfig(default_retx=SchemeConfig.policy(lora_side(config.gateway)),
                         pit_covers_in_records=settings.gateway_pit_covers_in_records,
                         uncached_content_types=SIGNAL_CONTENT_TYPES,
                         forward_retransmissions=prof.forward_retransmissions)
    gfw = Forwarder(kernel, fc, rng=rng("gateway"), hooks=hooks)
    gateway_radio = GatewayRadio(radio.gateway)
    for face in gateway_faces.values():
        gfw.add_face(face)
        gateway_radio.add(face)
    gfw.add_face(endpoint.face)
    hooks.configure(gfw)

    nodes: dict[int, NodeApp] = {}
    node_fws: dict[int, Forwarder] = {}
    for i, prefix in enumerate(prefixes, 1):
        dev = radio.devices[i]
        face = LoRaFace(dev, GATEWAY, counter=counter, link=LORA_LINK, direction="up",
                        slot_policy=registration_in_cap)
        nfw = Forwarder(kernel, ForwarderConfig(
            default_retx=SchemeConfig.policy(lora_side(config.node)),
            uncached_content_types=SIGNAL_CONTENT_TYPES,
            forward_retransmissions=prof.forward_retransmissions),
            rng=rng(f"node{i}"), hooks=config.node_behaviour().hooks(face))
        nfw.add_face(face)
        dev.on_receive = face.on_mac_receive
        nfw.add_route(REGISTRATION_PREFIX, face.face_id)
        ep = Endpoint(kernel, nfw, rng(f"node{i}-app"), f"app://node{i}")
        nodes[i] = NodeApp(ep, prefix, log, registration_lifetime_s=lora_s
                           if lora_s is not None else 64.0,
                           payload_bytes=prof.item_payload_bytes,
                           empty_signature=prof.item_empty_signature)
        node_fws[i] = nfw
    registers = config.pushes or not prof.static_routes
    if not registers:
        for i, face in gateway_faces.items():
            scheme.install_node(gfw, prefixes[i - 1], face)
    return EdgeParts(radio, config, gfw, endpoint, context, scheme, gateway_faces, nodes,
                     node_fws, counter, log, bypass, profile=prof, registers=registers)
