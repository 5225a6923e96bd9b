"""The consumer application on the consumer host (behind its own forwarder).

Modes (one per scheme family, chosen by the configuration):

* ``poll``: one Interest per transaction with the consumer's InterestLifetime; the consumer
  host's forwarder retransmits it (its CCN-lite triple). Data: delivered; Nack or timeout:
  failed.
* ``rice``: MustBeFresh Interests; a wait hint schedules the next Interest after the hint,
  a NACK Data (ContentType 3) fails the transaction, content delivers it. A lost answer
  (timeout, network Nack) is asked again with a new Interest after :data:`RICE_RETRY_S`
  until the transaction deadline: a delay-tolerant consumer keeps asking.
* ``push``: serves ``/RNP``: fetches the reflexive name the notification names, then
  acknowledges the notification.
"""

from __future__ import annotations

from dticn.apps.items import ItemLog
from dticn.links.endpoint import Endpoint
from dticn.packets import ContentType, Data, DecodeError, Interest, decode_data
from dticn.packets.name import TYPE_PARAMS_SHA256, Name
from dticn.schemes.signalling import (
    RNP_PREFIX,
    RPT_PREFIX,
    ack,
    read_reflexive_prefix,
    read_wait_hint,
)

RICE_RETRY_S = 1.0


class ConsumerApp:
    """See module docstring. ``log`` records transactions (started, delivered, failed)."""

    def __init__(self, endpoint: Endpoint, log: ItemLog, *, mode: str, lifetime_s: float,
                 deadline_s: float) -> None:
        self.endpoint = endpoint
        self.kernel = endpoint.kernel
        self.log = log
        self.mode = mode
        self.lifetime_ms = round(lifetime_s * 1000)
        self.deadline_s = deadline_s
        self.notifications = 0
        self._fetching: set[Name] = set()
        if mode == "push":
            endpoint.serve(RNP_PREFIX, self._on_notification)

    # -- poll / rice -----------------------------------------------------------------
    def request(self, name: Name) -> None:
        """Start one transaction for ``name`` now."""
        item = self.log.started(name, self.kernel.now())
        self._ask(name, item.started)

    def _ask(self, name: Name, started: float) -> None:
        item = self.log.items[name]
        item.attempts += 1
        interest = Interest(name, must_be_fresh=self.mode == "rice", lifetime_ms=self.lifetime_ms)
        self.endpoint.express(interest, lambda i, d: self._on_data(d, started),
                              lambda i, reason: self._on_failure(name, reason, started))

    def _on_data(self, data: Data, started: float) -> None:
        now = self.kernel.now()
        if data.content_type == ContentType.NACK:
            self.log.finished(data.name, now, "nack")
            return
        hint = read_wait_hint(data)
        if hint is None:
            self.log.finished(data.name, now, "delivered")
            return
        if now + hint > started + self.deadline_s:
            self.log.finished(data.name, now, "deadline")
            return
        self.kernel.call_later(hint, self._ask, data.name, started)

    def _on_failure(self, name: Name, reason: str, started: float) -> None:
        now = self.kernel.now()
        if self.mode == "rice" and now + RICE_RETRY_S <= started + self.deadline_s:
            self.kernel.call_later(RICE_RETRY_S, self._ask, name, started)
            return
        self.log.finished(name, now, reason)

    # -- push ------------------------------------------------------------------------
    def _on_notification(self, notify: Interest) -> None:
        if notify.name in self._fetching:
            return                        # a retransmitted notification: one fetch is enough
        self.notifications += 1
        self._fetching.add(notify.name)
        rnp = read_reflexive_prefix(notify.app_parameters)
        item_name = tuple(c for c in notify.name[2:] if c[0] != TYPE_PARAMS_SHA256)
        fetch_name = (rnp if rnp is not None else RPT_PREFIX + notify.name[1:2]) + item_name
        self.endpoint.express(
            Interest(fetch_name, lifetime_ms=self.lifetime_ms),
            lambda i, d: self._fetched(notify, item_name, d),
            lambda i, reason: self._fetching.discard(notify.name))

    def _fetched(self, notify: Interest, item_name: Name, wrapped: Data) -> None:
        self._fetching.discard(notify.name)
        try:
            inner = decode_data(wrapped.content)
        except DecodeError:
            return
        if inner.name == item_name:
            self.log.finished(item_name, self.kernel.now(), "delivered")
        self.endpoint.put(ack(notify.name))
