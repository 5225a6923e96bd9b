"""The consumer application on the consumer host (behind its own forwarder).

What it does per transaction is the configuration's consumer behaviour
(:class:`~dticn.schemes.base.ConsumerBehaviour`: polling; :class:`~dticn.schemes.rice.RiceConsumer`:
follows wait hints and keeps asking; :class:`~dticn.schemes.push.PushConsumer`: serves
``/RNP`` notifications); this class keeps the endpoint, the log and the timing they share.
"""

from __future__ import annotations

from dticn.apps.items import ItemLog
from dticn.links.app_endpoint import Endpoint
from dticn.packets.name import Name
from dticn.schemes.base import ConsumerBehaviour


class ConsumerApp:
    """One consumer; ``log`` records transactions (started, delivered, failed)."""

    def __init__(self, endpoint: Endpoint, log: ItemLog, *, behaviour: ConsumerBehaviour,
                 lifetime_s: float, deadline_s: float) -> None:
        self.endpoint = endpoint
        self.kernel = endpoint.kernel
        self.log = log
        self.behaviour = behaviour
        self.lifetime_ms = round(lifetime_s * 1000)
        self.deadline_s = deadline_s
        behaviour.start(self)

    def request(self, name: Name) -> None:
        """Start one transaction for ``name`` now."""
        item = self.log.started(name, self.kernel.now())
        self.ask(name, item.started)

    def ask(self, name: Name, started: float) -> None:
        """Express one Interest of the transaction for ``name`` started at ``started``."""
        item = self.log.items[name]
        item.attempts += 1
        self.endpoint.express(self.behaviour.interest(self, name),
                              lambda i, d: self.behaviour.on_data(self, d, started),
                              lambda i, reason: self.behaviour.on_failure(self, name, reason,
                                                                          started))
