"""Who asked for which route: the per-face registration cap counts the requester.

NFD lets a local application register a prefix on behalf of another face (the FaceId of
ControlParameters, https://redmine.named-data.net/projects/nfd/wiki/RibMgmt). The cap of
``ForwarderConfig.routes_per_face`` is about fairness between requesters, so a route is
charged to the face that asked for it, not to its next hop: an app cannot use up a
neighbour's allowance, and registering through another face does not escape its own.

A charge ends when the route is unregistered or its next-hop face closes (the forwarder
drops the route). When the requester closes, the routes it made for other faces are
removed with it, as its routes via itself are: otherwise an app could reconnect and add
another allowance's worth each time, bounded only by the FIB's capacity. (NFD keeps such
routes until they expire; DT-ICN has no route expiry, so it ties them to the requester.)
"""

from __future__ import annotations

from dticn.forwarder.face import Face
from dticn.forwarder.forwarder import Forwarder
from dticn.packets import Name

Route = tuple[Name, int]
"""(prefix, next-hop face id)"""


class RouteCharges:
    """Routes made through management, by requesting face."""

    def __init__(self, forwarder: Forwarder) -> None:
        self._fw = forwarder
        self._owner: dict[Route, int] = {}
        self._by_requester: dict[int, set[Route]] = {}
        self._by_target: dict[int, set[Route]] = {}
        self._watched: set[int] = set()

    def count(self, requester: int) -> int:
        """Routes ``requester`` holds through management."""
        return len(self._by_requester.get(requester, ()))

    def owner(self, route: Route) -> int | None:
        """The face charged for ``route`` (None: not made through management)."""
        return self._owner.get(route)

    def charge(self, requester: Face, route: Route, target: Face) -> None:
        """Charge a new ``route`` (via ``target``) to ``requester``."""
        self._owner[route] = requester.face_id
        self._by_requester.setdefault(requester.face_id, set()).add(route)
        self._by_target.setdefault(route[1], set()).add(route)
        for face in (requester, target):
            if face.face_id not in self._watched:
                self._watched.add(face.face_id)
                face.add_close_callback(self._on_close)

    def release(self, route: Route) -> None:
        """Forget ``route`` (unregistered, or its face went)."""
        requester = self._owner.pop(route, None)
        if requester is None:
            return
        for index, key in ((self._by_requester, requester), (self._by_target, route[1])):
            routes = index.get(key)
            if routes is not None:
                routes.discard(route)
                if not routes:
                    del index[key]

    def _on_close(self, face: Face) -> None:
        fid = face.face_id
        self._watched.discard(fid)
        for route in list(self._by_target.get(fid, ())):
            self.release(route)  # the forwarder already dropped routes via this face
        for route in list(self._by_requester.get(fid, ())):
            self._fw.fib.erase(route[0], route[1])
            self.release(route)
