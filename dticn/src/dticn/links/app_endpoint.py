"""A local application face with a small consumer/producer API (in the spirit of
python-ndn's ``NDNApp``, but sans-IO and on the EventKernel).

Frames the forwarder sends to the endpoint are handled one kernel event later, so an
application that answers at once never re-enters the forwarder's pipeline (the face
contract in :mod:`dticn.forwarder.face`).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from dticn.clock import TimerHandle
from dticn.forwarder.face import CallbackFace, FaceScope
from dticn.forwarder.forwarder import Forwarder
from dticn.packets import Data, DecodeError, Interest, LpPacket, decode_packet
from dticn.packets.name import Name, is_prefix
from dticn.sim.kernel import EventKernel

OnData = Callable[[Interest, Data], None]
OnFailure = Callable[[Interest, str], None]
OnInterest = Callable[[Interest], None]


@dataclass(eq=False)
class _Pending:
    interest: Interest
    on_data: OnData
    on_failure: OnFailure
    timer: TimerHandle


class Endpoint:
    """Express Interests and serve prefixes through one local face of a forwarder.

    Args:
        kernel: the clock (timers for Interest timeouts, deferred delivery).
        forwarder: where the face is added; None when the endpoint must exist before its
            forwarder (a gateway scheme's own endpoint is part of the forwarder's hooks):
            the builder then adds :attr:`face` to the forwarder like any other face, and
            routes to it itself (``serve(..., route=False)``).
        rng: nonce source (seeded by the experiment).
    """

    def __init__(self, kernel: EventKernel, forwarder: Forwarder | None,
                 rng: random.Random, uri: str = "app://") -> None:
        self.kernel = kernel
        self.forwarder = forwarder
        self.rng = rng
        self.face = CallbackFace(self._from_forwarder, uri=uri, scope=FaceScope.LOCAL)
        self._pending: dict[Name, list[_Pending]] = {}
        self._handlers: list[tuple[Name, OnInterest]] = []
        if forwarder is not None:
            forwarder.add_face(self.face)

    @property
    def face_id(self) -> int:
        """The face's id in its forwarder (0 until it is added)."""
        return self.face.face_id

    # -- consumer side ---------------------------------------------------------------
    def express(self, interest: Interest, on_data: OnData, on_failure: OnFailure,
                timeout_s: float | None = None) -> Interest:
        """Send ``interest``; exactly one of the callbacks fires (Data, or Nack/timeout)."""
        if interest.nonce is None:
            interest.nonce = self.rng.getrandbits(32)
        interest.wire = b""
        wire = interest.encode()
        wait = interest.lifetime if timeout_s is None else timeout_s
        pending = _Pending(interest, on_data, on_failure, None)  # type: ignore[arg-type]
        pending.timer = self.kernel.call_later(wait, self._timeout, pending)
        self._pending.setdefault(interest.name, []).append(pending)
        self.face.deliver(wire)
        return interest

    def _timeout(self, pending: _Pending) -> None:
        if self._drop(pending):
            pending.on_failure(pending.interest, "timeout")

    def _drop(self, pending: _Pending) -> bool:
        bucket = self._pending.get(pending.interest.name)
        if not bucket or pending not in bucket:
            return False
        bucket.remove(pending)
        if not bucket:
            del self._pending[pending.interest.name]
        pending.timer.cancel()
        return True

    @property
    def pending_count(self) -> int:
        """Interests still waiting for an answer."""
        return sum(len(b) for b in self._pending.values())

    # -- producer side ---------------------------------------------------------------
    def serve(self, prefix: Name, handler: OnInterest, *, route: bool = True) -> None:
        """Hand Interests under ``prefix`` to ``handler``; add the FIB route unless told not."""
        if route and self.forwarder is None:
            raise ValueError(f"endpoint {self.face.uri} was built without a forwarder: "
                             "route the prefix on the forwarder that holds its face, and "
                             "serve it with route=False")
        self._handlers.append((prefix, handler))
        self._handlers.sort(key=lambda h: -len(h[0]))
        if route and self.forwarder is not None:
            self.forwarder.add_route(prefix, self.face_id)

    def put(self, data: Data) -> None:
        """Give a Data to the forwarder (an answer, or unsolicited for a push)."""
        self.face.deliver(data.encode())

    # -- from the forwarder ----------------------------------------------------------
    def _from_forwarder(self, frame: bytes) -> None:
        self.kernel.call_later(0.0, self._handle, frame)

    def _handle(self, frame: bytes) -> None:
        try:
            packet = decode_packet(frame)
        except DecodeError:
            return
        if isinstance(packet, Data):
            for name in [n for n in self._pending if is_prefix(n, packet.name)]:
                for pending in list(self._pending.get(name, ())):
                    if pending.interest.can_be_prefix or name == packet.name:
                        self._drop(pending)
                        pending.on_data(pending.interest, packet)
        elif isinstance(packet, Interest):
            for prefix, handler in self._handlers:
                if is_prefix(prefix, packet.name):
                    handler(packet)
                    return
        elif isinstance(packet, LpPacket) and packet.nack_reason is not None:
            try:
                inner = decode_packet(packet.fragment or b"")
            except DecodeError:
                return
            if isinstance(inner, Interest):
                for pending in list(self._pending.get(inner.name, ())):
                    if pending.interest.nonce == inner.nonce:
                        self._drop(pending)
                        pending.on_failure(pending.interest, f"nack:{packet.nack_reason}")
