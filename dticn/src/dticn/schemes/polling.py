"""NDN polling ("vanilla"): the gateway is a plain forwarder, the consumer polls.

The six configurations are the artifact's table (InterestLifetime s / retransmission
timer ms / count): retransmission in the network (INR, the forwarder retransmits too) or
only by the consumer (CR). Gateway and node are 64/0/0 in all of them. Unregistered
prefixes have no FIB route at the gateway, so the consumer gets a network Nack (NoRoute).
"""

from __future__ import annotations

from dticn.schemes.base import SchemeConfig
from dticn.schemes.gateway_base import GatewayContext, GatewayScheme


class PollingScheme(GatewayScheme):
    """The gateway only registers nodes; Interests go to the node through the FIB."""

    name = "polling"


def _polling(ctx: GatewayContext) -> GatewayScheme:
    return PollingScheme(ctx)


def _cfg(name: str, consumer: tuple[float, float, int], forwarder: tuple[float, float, int],
         ) -> SchemeConfig:
    return SchemeConfig(
        name=name, description=f"NDN polling, consumer {consumer}, forwarder {forwarder}",
        consumer=consumer, forwarder=forwarder, gateway_scheme=_polling,
    )


CONFIGS = (
    _cfg("v1-inr", (4.0, 1000.0, 4), (4.0, 1000.0, 4)),
    _cfg("v1-cr", (4.0, 1000.0, 4), (4.0, 0.0, 0)),
    _cfg("v2-inr", (64.0, 15000.0, 4), (4.0, 1000.0, 4)),
    _cfg("v2-cr", (64.0, 15000.0, 4), (4.0, 0.0, 0)),
    _cfg("v3-inr", (64.0, 15000.0, 4), (64.0, 1000.0, 4)),
    _cfg("v3-cr", (64.0, 15000.0, 4), (60.0, 0.0, 0)),
)
