"""A configuration of the experiment = a scheme plus its per-host settings, as data, and the
behaviour each host runs under it, as objects.

A configuration supplies three behaviours, each built per host from the configuration
(never chosen by a mode string):

* the gateway's forwarder hooks (``gateway_scheme``, :mod:`dticn.schemes.gateway_base`);
* the consumer application's (:class:`ConsumerBehaviour`): how a transaction is asked for
  and when it ends;
* the node's (:class:`NodeBehaviour`): on demand, or pushing its items.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from dticn.clock import Clock
from dticn.forwarder.face import Face
from dticn.forwarder.hooks import ForwarderHooks
from dticn.forwarder.retx import RetxPolicy
from dticn.links.app_endpoint import Endpoint
from dticn.packets import ContentType, Data, Interest
from dticn.packets.name import Name
from dticn.schemes.gateway_base import GatewayContext, GatewayScheme
from dticn.schemes.signalling import read_wait_hint

Triple = tuple[float, float, int]
"""The paper's InterestLifetime s / retransmission timer ms / retransmission count."""


class ItemOutcomes(Protocol):
    """Where a consumer records its transactions (:class:`dticn.apps.items.ItemLog`)."""

    def finished(self, name: Name, now: float, outcome: str) -> Any: ...


class ConsumerHost(Protocol):
    """What a consumer behaviour drives: the consumer application."""

    endpoint: Endpoint
    kernel: Clock
    log: ItemOutcomes
    lifetime_ms: int
    deadline_s: float

    def ask(self, name: Name, started: float) -> None: ...


class ConsumerBehaviour:
    """NDN polling: one Interest per transaction with the consumer's InterestLifetime; the
    consumer host's forwarder retransmits it (its CCN-lite triple). Data: delivered; Nack or
    timeout: failed. An application NACK or a wait hint is understood too (shared by RICE).
    """

    must_be_fresh = False

    def start(self, host: ConsumerHost) -> None:
        """Set up what the consumer serves (nothing for polling)."""

    def interest(self, host: ConsumerHost, name: Name) -> Interest:
        return Interest(name, must_be_fresh=self.must_be_fresh, lifetime_ms=host.lifetime_ms)

    def on_data(self, host: ConsumerHost, data: Data, started: float) -> None:
        now = host.kernel.now()
        if data.content_type == ContentType.NACK:
            host.log.finished(data.name, now, "nack")
            return
        hint = read_wait_hint(data)
        if hint is None:
            host.log.finished(data.name, now, "delivered")
            return
        if now + hint > started + host.deadline_s:
            host.log.finished(data.name, now, "deadline")
            return
        host.kernel.call_later(hint, host.ask, data.name, started)

    def on_failure(self, host: ConsumerHost, name: Name, reason: str, started: float) -> None:
        host.log.finished(name, host.kernel.now(), reason)


class NodeBehaviour:
    """A node that answers Interests on demand: no forwarder hooks, nothing pushed."""

    pushes = False
    """True when the node produces items on its own (the consumer does not ask)."""

    def hooks(self, uplink: Face) -> ForwarderHooks | None:
        """The node forwarder's hooks, given the node's LoRa face (built before the
        forwarder, which gets the hooks at its construction and then adds the face)."""
        return None


@dataclass(frozen=True)
class SchemeConfig:
    """One of the compared configurations.

    Args:
        name: registry key (``v1-inr``, ``rice``, ``push-draft``...).
        consumer / forwarder / gateway / node: CCN-lite triples of each host.
        gateway_scheme: builds the gateway's hooks.
        consumer_behaviour / node_behaviour: build the consumer's and each node's behaviour.
        hop_hooks: builds the per-hop hooks of the Internet forwarders (reflexive state),
            or None.
        transaction_deadline_s: how long a consumer transaction may take before it counts
            as failed (poll: the consumer's InterestLifetime).
    """

    name: str
    description: str
    consumer: Triple
    forwarder: Triple
    gateway_scheme: Callable[[GatewayContext], GatewayScheme]
    consumer_behaviour: type[ConsumerBehaviour] = ConsumerBehaviour
    node_behaviour: type[NodeBehaviour] = NodeBehaviour
    hop_hooks: Callable[[], ForwarderHooks] | None = None
    gateway: Triple = (64.0, 0.0, 0)
    node: Triple = (64.0, 0.0, 0)
    transaction_deadline_s: float | None = None

    @staticmethod
    def policy(triple: Triple) -> RetxPolicy:
        """The forwarder retransmission policy of a triple."""
        return RetxPolicy.from_triple(*triple)

    @property
    def deadline_s(self) -> float:
        """Seconds after its start at which a transaction counts as failed."""
        if self.transaction_deadline_s is not None:
            return self.transaction_deadline_s
        return self.consumer[0]

    @property
    def pushes(self) -> bool:
        """True when the nodes push their items (the consumer is notified, never asks)."""
        return self.node_behaviour.pushes
