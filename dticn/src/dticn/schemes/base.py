"""A configuration of the experiment = a scheme plus its per-host settings, as data."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dticn.forwarder.hooks import ForwarderHooks
from dticn.forwarder.retx import RetxPolicy
from dticn.schemes.gateway import GatewayContext, GatewayScheme

Triple = tuple[float, float, int]
"""The paper's InterestLifetime s / retransmission timer ms / retransmission count."""

CONSUMER_MODES = ("poll", "rice", "push")
NODE_MODES = ("on-demand", "push")


@dataclass(frozen=True)
class SchemeConfig:
    """One of the compared configurations.

    Args:
        name: registry key (``v1-inr``, ``rice``, ``push-draft``...).
        consumer / forwarder / gateway / node: CCN-lite triples of each host.
        consumer_mode: how the consumer app behaves (poll, rice, push).
        node_mode: on-demand production (answers Interests) or periodic push.
        gateway_scheme: builds the gateway's hooks.
        hop_hooks: builds the per-hop hooks of the Internet forwarders (reflexive state),
            or None.
        transaction_deadline_s: how long a consumer transaction may take before it counts
            as failed (poll: the consumer's InterestLifetime).
    """

    name: str
    description: str
    consumer: Triple
    forwarder: Triple
    consumer_mode: str
    node_mode: str
    gateway_scheme: Callable[[GatewayContext], GatewayScheme]
    hop_hooks: Callable[[], ForwarderHooks] | None = None
    gateway: Triple = (64.0, 0.0, 0)
    node: Triple = (64.0, 0.0, 0)
    transaction_deadline_s: float | None = None

    def __post_init__(self) -> None:
        if self.consumer_mode not in CONSUMER_MODES:
            raise ValueError(f"consumer_mode={self.consumer_mode!r}: use one of {CONSUMER_MODES}")
        if self.node_mode not in NODE_MODES:
            raise ValueError(f"node_mode={self.node_mode!r}: use one of {NODE_MODES}")

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
