"""Enough of NFD's management protocol for unmodified NDN apps and NFD's tools.

Handled commands: ``/localhost/nfd/rib/register`` and ``/localhost/nfd/rib/unregister``
(the signed-Interest v0.3 form, the v0.2 command-Interest form python-ndn's
``NDNApp.register`` sends, and the unsigned five-component form), answered with a
ControlResponse (status 200 and the effective ControlParameters). ``/localhop/nfd/...``
is accepted the same way. Anything else under ``/localhost/nfd`` gets status 501.

Security: commands are accepted only from local faces (403 otherwise, ``/localhop``
included), and their signatures are checked by :class:`dticn.mgmt.command_auth.
CommandAuthenticator` (403 with the reason when malformed, wrongly computed, untrusted
under ``--trust-anchor`` keys, stale or replayed; each counted as a drop). Each requesting
face may hold at most ``ForwarderConfig.routes_per_face`` routes (403 beyond;
:mod:`dticn.mgmt.route_charges` charges the requester, also when it registers for another
face), so one app registering thousands of prefixes cannot use up the FIB.

Datasets (:mod:`dticn.mgmt.status`, :mod:`dticn.mgmt.listings`): ``status/general``,
``status/dticn``, ``faces/list`` and ``fib/list``, versioned and segmented
(:mod:`dticn.mgmt.segments`).

The manager sits behind an internal face (id 1) with a FIB route for
``/localhost/nfd``, as NFD's does; the requesting face comes in the NDNLPv2
IncomingFaceId header the forwarder adds for faces that want it. Replies are delivered
on the next clock tick, never re-entrantly.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType

from dticn.forwarder.face import Face, FaceScope
from dticn.forwarder.forwarder import Forwarder
from dticn.mgmt.command_auth import CommandAuthenticator, CommandRefused
from dticn.mgmt.listings import faces_list, fib_list
from dticn.mgmt.route_charges import RouteCharges
from dticn.mgmt.segments import DatasetPublisher, Snapshots
from dticn.mgmt.status import Dataset, general_status, json_status
from dticn.packets import Data, DecodeError, Interest, LpPacket, decode_packet, name_to_str
from dticn.packets.name import (
    TYPE_NAME,
    Name,
    decode_name_value,
    encode_name,
    name_from_str,
)
from dticn.packets.tlv import decode_uint, encode_tlv, encode_uint, iter_elements, read_outer

log = logging.getLogger(__name__)

MGMT_FACE_ID = 1
TYPE_CONTROL_PARAMETERS = 0x68
TYPE_CONTROL_RESPONSE = 0x65
TYPE_STATUS_CODE = 0x66
TYPE_STATUS_TEXT = 0x67
TYPE_FACE_ID = 0x69
TYPE_ORIGIN = 0x6F
TYPE_COST = 0x6A
TYPE_FLAGS = 0x6C
TYPE_EXPIRATION_PERIOD = 0x6D
ROUTE_FLAG_CHILD_INHERIT = 1


@dataclass(slots=True)
class ControlParameters:
    """The fields of NFD ControlParameters that rib commands use."""

    name: Name | None = None
    face_id: int | None = None
    origin: int | None = None
    cost: int | None = None
    flags: int | None = None
    expiration_ms: int | None = None

    @classmethod
    def decode(cls, wire: bytes) -> ControlParameters:
        """Parse a ControlParameters TLV (type 0x68)."""
        buf = memoryview(wire)
        _, s, e = read_outer(buf, TYPE_CONTROL_PARAMETERS)
        out = cls()
        for typ, _es, vs, ve in iter_elements(buf, s, e):
            if typ == TYPE_NAME:
                out.name = decode_name_value(buf, vs, ve)
            elif typ == TYPE_FACE_ID:
                out.face_id = decode_uint(buf[vs:ve])
            elif typ == TYPE_ORIGIN:
                out.origin = decode_uint(buf[vs:ve])
            elif typ == TYPE_COST:
                out.cost = decode_uint(buf[vs:ve])
            elif typ == TYPE_FLAGS:
                out.flags = decode_uint(buf[vs:ve])
            elif typ == TYPE_EXPIRATION_PERIOD:
                out.expiration_ms = decode_uint(buf[vs:ve])
        return out

    def encode(self) -> bytes:
        """Encode in NFD's field order."""
        parts = []
        if self.name is not None:
            parts.append(encode_name(self.name))
        for typ, val in (
            (TYPE_FACE_ID, self.face_id), (TYPE_ORIGIN, self.origin), (TYPE_COST, self.cost),
            (TYPE_FLAGS, self.flags), (TYPE_EXPIRATION_PERIOD, self.expiration_ms),
        ):
            if val is not None:
                parts.append(encode_tlv(typ, encode_uint(val)))
        return encode_tlv(TYPE_CONTROL_PARAMETERS, b"".join(parts))


def control_response(code: int, text: str, body: ControlParameters | None = None) -> bytes:
    """A ControlResponse TLV."""
    value = encode_tlv(TYPE_STATUS_CODE, encode_uint(code)) + encode_tlv(
        TYPE_STATUS_TEXT, text.encode()
    )
    # Always carry a body (empty on errors): python-ndn's parse_response needs one.
    value += (body or ControlParameters()).encode()
    return encode_tlv(TYPE_CONTROL_RESPONSE, value)


class ManagementFace(Face):
    """The internal face behind which :class:`NfdManagement` answers commands."""

    def __init__(self, manager: NfdManagement) -> None:
        super().__init__("internal://", "internal://", scope=FaceScope.LOCAL)
        self.wants_incoming_face_id = True
        self._manager = manager

    def transmit(self, frame: bytes) -> None:
        self._manager.on_frame(frame)


class NfdManagement:
    """RIB management (register/unregister) on top of a forwarder's FIB, and the status
    datasets of :mod:`dticn.mgmt.status`.

    ``wall_clock`` gives the datasets' timestamps and the commands' freshness (seconds
    since the epoch); injected so the manager has no clock of its own. ``authenticator``
    checks command signatures (default: no trust anchor, NFD's localhost default).
    """

    def __init__(
        self, forwarder: Forwarder, wall_clock: Callable[[], float] = time.time,
        authenticator: CommandAuthenticator | None = None,
    ) -> None:
        self.forwarder = forwarder
        self.face = ManagementFace(self)
        forwarder.add_face(self.face, face_id=MGMT_FACE_ID)
        for prefix in ("/localhost/nfd", "/localhop/nfd"):
            forwarder.add_route(name_from_str(prefix), MGMT_FACE_ID)
        self._localhost_nfd = name_from_str("/localhost/nfd")
        self._localhop_nfd = name_from_str("/localhop/nfd")
        self._wall_clock = wall_clock
        self.started = wall_clock()
        self.authenticator = authenticator or CommandAuthenticator(wall_clock=wall_clock)
        self.charges = RouteCharges(forwarder)
        self.publisher = DatasetPublisher()
        self.snapshots = Snapshots(wall_clock)
        fw, started = forwarder, self.started
        self._datasets: dict[tuple[bytes, ...], Dataset] = {
            name_from_str("/localhost/nfd/status/general"):
                lambda now: general_status(fw, started, now),
            name_from_str("/localhost/nfd/status/dticn"):
                lambda now: json_status(fw, started, now),
            name_from_str("/localhost/nfd/faces/list"): lambda now: faces_list(fw),
            name_from_str("/localhost/nfd/fib/list"): lambda now: fib_list(fw),
        }

    def on_frame(self, frame: bytes) -> None:
        """An Interest forwarded to management (wrapped in an LpPacket)."""
        try:
            packet = decode_packet(frame)
            in_face_id = 0
            if isinstance(packet, LpPacket):
                in_face_id = packet.incoming_face_id or 0
                packet = decode_packet(packet.fragment or b"")
        except DecodeError as exc:
            log.debug("management: undecodable frame: %s", exc)
            return
        if not isinstance(packet, Interest):
            return
        data = self.handle(packet, in_face_id)
        if data is not None:
            self.forwarder.clock.call_later(0.0, self.face.deliver, data.encode())

    def handle(self, interest: Interest, in_face_id: int) -> Data | None:
        """Dispatch a command Interest; return the reply Data."""
        name = interest.name
        dataset = self._datasets.get(name)
        if dataset is not None:
            now = self._wall_clock()
            content = self.snapshots.content(name, lambda: dataset(now))
            return self.publisher.publish(name, content, int(now * 1000))
        if len(name) > 2 and name[:-2] in self._datasets:
            return self.publisher.find(name)  # a later segment; None if no longer kept
        if name[:2] not in (self._localhost_nfd, self._localhop_nfd) or len(name) < 4:
            return self._reply(interest, control_response(501, "Unsupported command"))
        module = _component_value(name[2])
        verb = _component_value(name[3])
        handler = _HANDLERS.get((module, verb))
        if handler is None:
            return self._reply(interest, control_response(501, "Unsupported command"))
        if len(name) < 5:
            return self._reply(interest, control_response(400, "Missing ControlParameters"))
        try:
            params = ControlParameters.decode(_component_value(name[4]))
        except DecodeError as exc:
            return self._reply(interest, control_response(400, f"Malformed parameters: {exc}"))
        requester = self.forwarder.faces.get(in_face_id)
        if requester is None or not requester.is_local:
            self.forwarder.counters.drop("registration_not_local")
            return self._reply(interest, control_response(
                403, "Prefix registration is accepted only from local faces"))
        try:
            self.authenticator.check(interest, in_face_id)
        except CommandRefused as refused:
            self.forwarder.counters.drop(refused.reason)
            log.debug("management: face %d command refused: %s", in_face_id, refused.text)
            return self._reply(interest, control_response(403, refused.text))
        code, text, body = handler(self, params, requester)
        log.debug("management %s/%s %s -> %d", module.decode(errors="replace"),
                 verb.decode(errors="replace"),
                 name_to_str(params.name) if params.name else "-", code)
        return self._reply(interest, control_response(code, text, body))

    def _reply(self, interest: Interest, content: bytes) -> Data:
        return Data(name=interest.name, content=content)

    def rib_register(
        self, params: ControlParameters, requester: Face
    ) -> tuple[int, str, ControlParameters | None]:
        """Add a route for ``params.name`` via the requesting face, or via the face
        ``params.face_id`` names (NFD lets a local app register for another face); the
        route is charged to the requester (:mod:`dticn.mgmt.route_charges`)."""
        if params.name is None:
            return 400, "Name is required", None
        fw = self.forwarder
        face_id = params.face_id or requester.face_id
        target = fw.faces.get(face_id)
        if target is None:
            return 410, f"Face {face_id} not found", None
        cost = params.cost or 0
        route = (params.name, face_id)
        is_new = not _has_route(fw, params.name, face_id)
        cap = fw.config.routes_per_face
        if is_new and self.charges.count(requester.face_id) >= cap:
            fw.counters.drop("routes_per_face")
            return 403, (f"Face {requester.face_id} already registered {cap} routes; "
                         "unregister some or raise routes_per_face"), None
        try:
            self.forwarder.add_route(params.name, face_id, cost)
        except OverflowError as exc:
            return 503, str(exc), None
        if is_new:
            self.charges.charge(requester, route, target)
        body = ControlParameters(
            name=params.name, face_id=face_id, origin=params.origin or 0, cost=cost,
            flags=params.flags if params.flags is not None else ROUTE_FLAG_CHILD_INHERIT,
        )
        return 200, "OK", body

    def rib_unregister(
        self, params: ControlParameters, requester: Face
    ) -> tuple[int, str, ControlParameters | None]:
        """Remove the route for ``params.name`` via the requesting (or given) face."""
        if params.name is None:
            return 400, "Name is required", None
        face_id = params.face_id or requester.face_id
        self.forwarder.fib.erase(params.name, face_id)
        self.charges.release((params.name, face_id))
        body = ControlParameters(name=params.name, face_id=face_id, origin=params.origin or 0)
        return 200, "OK", body


def _has_route(fw: Forwarder, prefix: Name, face_id: int) -> bool:
    entry = fw.fib.find_exact(prefix)
    return entry is not None and any(h.face_id == face_id for h in entry.nexthops)


def _component_value(component: bytes) -> bytes:
    buf = memoryview(component)
    _, s, e = read_outer(buf)
    return bytes(buf[s:e])


_HANDLERS = MappingProxyType({
    (b"rib", b"register"): NfdManagement.rib_register,
    (b"rib", b"unregister"): NfdManagement.rib_unregister,
})
