"""The simulator's prediction for an emulated scenario: the same :class:`Edge` (same
scenario, same seed) run in virtual time, with a simulated consumer where the real one
would connect.

    consumer app - [consumer fwd] --link_delay_s-- [gateway + scheme] || LoRa || nodes

The emulated consumer talks to the gateway over loopback; ``link_delay_s`` stands for that
(one way, in virtual seconds: wall latency times the time scale). The consumer is the
experiments' :class:`~dticn.apps.consumer.ConsumerApp` in the scheme's mode: RICE follows
wait hints exactly like the python-ndn example; push answers ``/RNP`` and fetches the item.

Time to content: request to Data (polling, RICE); production at the node to the item at
the consumer (push), the metric of :mod:`dticn.experiments.metrics`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from dticn.apps.consumer import ConsumerApp
from dticn.emulation.edge_scenario import EdgeScenario
from dticn.emulation.emulated_edge import Edge
from dticn.forwarder.forwarder import Forwarder
from dticn.forwarder.settings import ForwarderConfig
from dticn.links.app_endpoint import Endpoint
from dticn.links.internet import InternetLink
from dticn.packets.name import name_from_str, name_to_str
from dticn.schemes.base import SchemeConfig
from dticn.schemes.signalling import RFX_PREFIX, RNP_PREFIX, RPT_PREFIX, SIGNAL_CONTENT_TYPES

TAIL_S = 200.0
"""Virtual seconds simulated after the last request or production (RICE deadline 150 s)."""


@dataclass(frozen=True)
class ItemOutcome:
    """One transaction of the prediction."""

    name: str
    started: float
    done: float | None
    outcome: str | None

    @property
    def time_to_content(self) -> float | None:
        """Seconds from start to the content, None unless delivered."""
        if self.outcome != "delivered" or self.done is None:
            return None
        return self.done - self.started


def predict(scenario: EdgeScenario, requests: Sequence[tuple[float, str]] = (), *,
            link_delay_s: float = 0.001) -> dict[str, ItemOutcome]:
    """Run ``scenario`` in virtual time; return each item's outcome by name.

    Args:
        scenario: the same scenario the emulated gateway runs.
        requests: ``(virtual start time, name)`` of consumer requests (polling, RICE);
            ignored for push schemes, whose items come from the scenario's push schedule.
        link_delay_s: one-way consumer-gateway delay in virtual seconds.
    """
    edge = Edge(scenario)
    cfg = edge.config
    kernel = edge.kernel
    consumer_fw = Forwarder(
        kernel, ForwarderConfig(default_retx=SchemeConfig.policy(cfg.consumer),
                                uncached_content_types=SIGNAL_CONTENT_TYPES),
        rng=random.Random(f"{scenario.seed}/consumer"))
    link = InternetLink(kernel, "consumer-gateway", delay_s=link_delay_s,
                        rng=random.Random(f"{scenario.seed}/link"), counter=edge.counter)
    consumer_face, gateway_face = link.connect(consumer_fw, edge.gateway_fw)
    for i in range(1, scenario.nodes + 1):
        consumer_fw.add_route(scenario.prefix(i), consumer_face)
    for reflexive in (RPT_PREFIX, RFX_PREFIX):      # the python-ndn app asks the gateway
        consumer_fw.add_route(reflexive, consumer_face)
    edge.gateway_fw.add_route(RNP_PREFIX, gateway_face)
    endpoint = Endpoint(kernel, consumer_fw, random.Random(f"{scenario.seed}/consumer-app"),
                        "app://consumer")
    consumer = ConsumerApp(endpoint, edge.log, behaviour=cfg.consumer_behaviour(),
                           lifetime_s=cfg.consumer[0], deadline_s=cfg.deadline_s)
    edge.start()
    last = 0.0
    if cfg.pushes:
        last = max((t for i in edge.nodes for t in scenario.push_schedule(i)), default=0.0)
    else:
        for t, name in requests:
            kernel.call_at(t, consumer.request, name_from_str(name))
            last = max(last, t)
    kernel.run(until=last + TAIL_S)
    return {name_to_str(n): ItemOutcome(name_to_str(n), it.started, it.done, it.outcome)
            for n, it in edge.log.items.items()}
