"""The LoRa node's application (behind the node's forwarder).

It registers with the gateway (``/reg/<id>``, sent in the CAP by the LoRa face), then either
answers Interests for ``/<id>/<i>`` on demand, or produces an item every few tens of seconds
and pushes it: the Data goes to its forwarder unsolicited, and the push scheme's node hooks
(:class:`~dticn.schemes.push.NodePushHooks`) send it out of the LoRa face in the next uplink
GTS.
"""

from __future__ import annotations

from dticn.apps.items import ItemLog
from dticn.links.app_endpoint import Endpoint
from dticn.packets import Data, Interest
from dticn.packets.name import Name
from dticn.schemes.signalling import REGISTRATION_PREFIX

REGISTRATION_RETRY_S = 64.0


class NodeApp:
    """Registration, on-demand production and push. ``prefix`` is the node's ``/<id>``."""

    def __init__(self, endpoint: Endpoint, prefix: Name, log: ItemLog, *,
                 payload_bytes: int = 8, freshness_ms: int = 3_600_000,
                 registration_lifetime_s: float = 64.0, empty_signature: bool = False) -> None:
        self.endpoint = endpoint
        self.kernel = endpoint.kernel
        self.prefix = prefix
        self.log = log
        self.payload_bytes = payload_bytes
        self.freshness_ms = freshness_ms
        self.registration_lifetime_s = registration_lifetime_s
        self.empty_signature = empty_signature
        self.registered_at: float | None = None
        self.answered = 0
        endpoint.serve(prefix, self._on_interest)

    def register(self) -> None:
        """Send ``/reg/<id>``; retry after a while if no ACK came back."""
        if self.registered_at is not None:
            return
        lifetime_ms = round(self.registration_lifetime_s * 1000)
        self.endpoint.express(Interest(REGISTRATION_PREFIX + self.prefix, lifetime_ms=lifetime_ms),
                              self._registered, self._registration_failed)

    def _registered(self, interest: Interest, data: Data) -> None:
        self.registered_at = self.kernel.now()

    def _registration_failed(self, interest: Interest, reason: str) -> None:
        self.kernel.call_later(min(REGISTRATION_RETRY_S, self.registration_lifetime_s),
                               self.register)

    def content(self, name: Name) -> Data:
        """The item ``name``: ``payload_bytes`` bytes ending in the item index (the
        artifact's: 4), signed DigestSha256 (with an empty value where the profile says,
        as CCN-lite writes it)."""
        body = (name[-1][-4:].rjust(4, b"\0") + bytes(self.payload_bytes))[: self.payload_bytes]
        return Data(name, body, freshness_ms=self.freshness_ms,
                    empty_signature=self.empty_signature)

    def _on_interest(self, interest: Interest) -> None:
        self.answered += 1
        self.endpoint.put(self.content(interest.name))

    def push(self, name: Name) -> None:
        """Produce ``name`` now and push it (lost if the node is not registered yet)."""
        self.log.started(name, self.kernel.now())
        if self.registered_at is None:
            self.log.finished(name, self.kernel.now(), "unregistered")
            return
        self.endpoint.put(self.content(name))
