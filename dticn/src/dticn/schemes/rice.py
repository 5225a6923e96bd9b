"""RICE-like delay-tolerant retrieval: the gateway answers at once and fetches itself.

Algorithm (per consumer Interest reaching the gateway, after a CS miss):

1. No registered node covers the name: answer Data ContentType NACK (3).
2. Else, unless the gateway already has its own request for the name in flight, express
   an Interest for it through the gateway's own endpoint (lifetime 64 s, so nothing waits
   long in Internet PITs; the reply lands in the gateway's CS like any Data).
3. Answer the consumer at once with a wait hint (ContentType WAIT, WaitTime TLV), the
   expected arrival minus now; the consumer asks again (MustBeFresh) after it and is served
   from the gateway's CS, or gets a shorter hint if the node is late.

Hint modes: ``rice`` uses the artifact's static one multisuperframe (30.72 s, its "TODO:
make dynamic"), or one reporting period over LoRaWAN; ``rice-schedule`` reads the MAC's
timing (:mod:`dticn.schemes.mac_timing`): over DSME the next downlink GTS of the node
(after the frames already queued for it), the node's next uplink GTS after that frame and
its ACK, plus the reply's airtime; over LoRaWAN class A the node's next uplink (its last
one plus the reporting period), RX1 after it, and the reply's uplink.
"""

from __future__ import annotations

from dticn.forwarder.face import Face
from dticn.forwarder.forwarder import Forwarder
from dticn.forwarder.pit import PitEntry
from dticn.forwarder.retx import RetxPolicy
from dticn.packets import Data, Interest
from dticn.packets.name import Name
from dticn.schemes.base import ConsumerBehaviour, ConsumerHost, SchemeConfig
from dticn.schemes.gateway_base import GatewayContext, GatewayScheme
from dticn.schemes.signalling import is_signal, nack, wait_hint

HINT_GUARD_S = 0.1
"""Added to every hint: the consumer's Interest needs a moment to reach the gateway."""
RICE_RETRY_S = 1.0
"""A RICE consumer asks again this long after a lost answer (timeout, network Nack)."""


class RiceConsumer(ConsumerBehaviour):
    """MustBeFresh Interests; a wait hint schedules the next Interest after the hint, a NACK
    Data fails the transaction, content delivers it. A lost answer is asked again with a new
    Interest after :data:`RICE_RETRY_S` until the transaction deadline: a delay-tolerant
    consumer keeps asking."""

    must_be_fresh = True

    def on_failure(self, host: ConsumerHost, name: Name, reason: str, started: float) -> None:
        now = host.kernel.now()
        if now + RICE_RETRY_S <= started + host.deadline_s:
            host.kernel.call_later(RICE_RETRY_S, host.ask, name, started)
            return
        host.log.finished(name, now, reason)


class RiceScheme(GatewayScheme):
    """Static hint: one multisuperframe."""

    name = "rice"

    def __init__(self, ctx: GatewayContext) -> None:
        super().__init__(ctx)
        self.expected: dict[Name, float] = {}
        self.lora_requests = 0
        self.hints = 0
        self.nacks = 0
        self.signals_for_own_request = 0

    def on_request(self, fw: Forwarder, in_face: Face, interest: Interest,
                   entry: PitEntry) -> bool:
        if in_face is self.ctx.endpoint.face or self.is_node_face(in_face):
            return False                 # the gateway's own LoRa request, or node traffic
        node = self.ctx.node_of(interest.name)
        if node is None:
            self.nacks += 1
            fw.answer_in_record(entry, in_face.face_id, nack(interest.name))
            return True
        now = self.ctx.kernel.now()
        eta = self.expected.get(interest.name)
        if eta is None:
            eta = now + self.estimate(node[1], interest)
            self.expected[interest.name] = eta
            self._fetch(interest.name, eta - now, node[1])
        elif eta <= now:                 # late (MAC retry, busy slot): estimate again
            eta = now + self.estimate_late(node[1])
        self.hints += 1
        # Only this consumer gets the hint: a consumer Interest without MustBeFresh or
        # CanBePrefix shares its PIT entry with the gateway's own request, which must keep
        # waiting for the content (its in-record stays).
        hint = self.ctx.on_wire(self.hint(eta, now))
        fw.answer_in_record(entry, in_face.face_id, wait_hint(interest.name, hint))
        return True

    def hint(self, eta: float, now: float) -> float:
        """The wait hint for content expected at ``eta``: static (the profile's, else one
        multisuperframe)."""
        return self.static_s()

    def static_s(self) -> float:
        """The static hint: the profile's (the artifact's ``WAIT+32``) or one MAC period
        (a multisuperframe, a reporting period)."""
        if self.ctx.static_hint_s is not None:
            return self.ctx.static_hint_s
        return self.ctx.mac.period_s

    def estimate_late(self, face: Face) -> float:
        """Seconds until the content should arrive when it is already overdue."""
        return self.estimate(face, None)

    def install_node(self, fw: Forwarder, prefix: Name, face: Face) -> None:
        super().install_node(fw, prefix, face)
        # the gateway's own requests toward this node live as long as their InterestLifetime
        # says (set per request from the schedule), not the gateway's fixed 64 s
        fw.retx.insert(prefix, RetxPolicy(pit_lifetime=None))

    def _fetch(self, name: Name, eta_s: float, face: Face) -> None:
        """Ask the node; the request outlives the expected arrival by a LoRa round trip plus
        the time the frames already queued for the node take (DSME: one multisuperframe
        per frame), so a backlog (duty cycle, many nodes, several items asked at once)
        does not make it expire in the queue and be sent again."""
        self.lora_requests += 1
        queued_s = self.ctx.mac.backlog_s(self.ctx.node(face))
        lifetime_ms = round((eta_s + queued_s + self.ctx.lora_interest_lifetime_s) * 1000)
        self.ctx.endpoint.express(Interest(name, lifetime_ms=lifetime_ms), self._arrived,
                                  self._failed)

    def _arrived(self, interest: Interest, data: Data) -> None:
        if is_signal(data):                        # never the content: ask the node again
            self.signals_for_own_request += 1
            self._failed(interest, "signal")
            return
        self.expected.pop(interest.name, None)     # the CS holds it from now on

    def _failed(self, interest: Interest, reason: str) -> None:
        self.expected.pop(interest.name, None)     # the next consumer Interest asks again

    def estimate(self, face: Face, interest: Interest | None) -> float:
        """Seconds until the content should be at the gateway (node behind LoRa
        ``face``)."""
        return self.static_s()

    def temporary_state(self) -> dict[str, int]:
        return {"rice_expected": len(self.expected)}


class ScheduleRiceScheme(RiceScheme):
    """Hint from the MAC timing: when the request can go down and the reply come up."""

    name = "rice-schedule"

    def hint(self, eta: float, now: float) -> float:
        return max(eta - now, 0.0) + HINT_GUARD_S

    def estimate_late(self, face: Face) -> float:
        ctx = self.ctx
        now = ctx.kernel.now()
        return ctx.mac.late_eta(ctx.node(face), now) - now

    def estimate(self, face: Face, interest: Interest | None) -> float:
        if interest is None:
            return self.estimate_late(face)
        ctx = self.ctx
        now = ctx.kernel.now()
        return ctx.mac.reply_eta(ctx.node(face), len(interest.encode()), now) - now


def _static(ctx: GatewayContext) -> GatewayScheme:
    return RiceScheme(ctx)


def _schedule(ctx: GatewayContext) -> GatewayScheme:
    return ScheduleRiceScheme(ctx)


CONFIGS = (
    SchemeConfig(
        name="rice", description="RICE-like retrieval, static hint (one multisuperframe)",
        consumer=(4.0, 1000.0, 4), forwarder=(4.0, 1000.0, 4), gateway_scheme=_static,
        consumer_behaviour=RiceConsumer, transaction_deadline_s=150.0,
    ),
    SchemeConfig(
        name="rice-schedule",
        description="RICE-like retrieval, hint from the DSME schedule (next slots + airtime)",
        consumer=(4.0, 1000.0, 4), forwarder=(4.0, 1000.0, 4), gateway_scheme=_schedule,
        consumer_behaviour=RiceConsumer, transaction_deadline_s=150.0,
    ),
)
