"""Reflexive forwarding with local push (both variants).

Sequence for one item (node ``/xid``, gateway ``gw``):

1. The node registered in the CAP (``/reg/xid``, ACK from the gateway).
2. The node pushes Data ``/xid/<i>`` unsolicited in its uplink GTS: one LoRa frame, no
   LoRa Interest.
3. The gateway keeps the item, pinned in its CS, wrapped in a Data named
   ``/RPT/gw/xid/<i>`` (artifact) or ``/rfx/<random>/xid/<i>`` (draft) whose Content is the
   node's Data unchanged.
4. The gateway sends ``/RNP/gw/xid/<i>`` toward the consumer (static route ``/RNP``); the
   draft variant adds the random RNP in ApplicationParameters. The gateway retransmits it
   CCN-lite style (every 1 s, 4 times) until the ACK.
5. Each hop keeps reverse state (:mod:`dticn.schemes.reflexive`), the consumer fetches the
   wrapped item with a reflexive Interest, then answers the ``/RNP`` Interest with an ACK.
6. The ACK reaches the gateway, which drops the pinned item. Unacknowledged items and all
   reverse state expire after ``reflexive_lifetime_s``.
"""

from __future__ import annotations

from dticn.clock import TimerHandle
from dticn.forwarder.face import Face
from dticn.forwarder.forwarder import Forwarder
from dticn.forwarder.hooks import ForwarderHooks, UnsolicitedDataVerdict
from dticn.forwarder.retx import RetxPolicy
from dticn.packets import Data, DecodeError, Interest, decode_data
from dticn.packets.name import TYPE_PARAMS_SHA256, Name
from dticn.schemes.base import ConsumerBehaviour, ConsumerHost, NodeBehaviour, SchemeConfig
from dticn.schemes.gateway_base import GatewayContext, GatewayScheme
from dticn.schemes.reflexive import FibReflexiveHop, PitReflexiveHop
from dticn.schemes.signalling import (
    RFX_PREFIX,
    RNP_PREFIX,
    RPT_PREFIX,
    ack,
    read_reflexive_prefix,
    reflexive_parameters,
)


class PushScheme(GatewayScheme):
    """The artifact's push: fixed ``/RNP`` and ``/RPT`` prefixes, temporary FIB routes."""

    name = "push"

    def __init__(self, ctx: GatewayContext, hop: ForwarderHooks | None = None) -> None:
        super().__init__(ctx, hop)
        self.items: dict[Name, TimerHandle] = {}
        self.pushed = 0
        self.acked = 0

    def configure(self, fw: Forwarder) -> None:
        super().configure(fw)
        # the gateway's own notifications get CCN-lite INR (lifetime/1000 ms/4) like the
        # consumer side, so one lost /RNP does not lose the item
        lifetime = self.ctx.reflexive_lifetime_s
        fw.retx.insert(RNP_PREFIX, RetxPolicy.from_triple(lifetime, 1000.0, 4))

    def reflexive_prefix(self) -> tuple[Name, bytes | None]:
        """Where the wrapped item lives, and the first Interest's ApplicationParameters."""
        return RPT_PREFIX + self.ctx.gateway_name, None

    def on_unsolicited_data(self, fw: Forwarder, in_face: Face, data: Data) -> str:
        node = self.ctx.node_of(data.name)
        if not self.is_node_face(in_face) or node is None or node[1] is not in_face:
            return UnsolicitedDataVerdict.DROP
        self.pushed += 1
        prefix, params = self.reflexive_prefix()
        wrapped = Data(prefix + data.name, data.encode(),
                       freshness_ms=round(self.ctx.reflexive_lifetime_s * 1000))
        fw.inject_data(wrapped, pinned=True)
        old = self.items.pop(wrapped.name, None)
        if old is not None:
            old.cancel()
        self.items[wrapped.name] = self.ctx.kernel.call_later(
            self.ctx.reflexive_lifetime_s, self._release, fw, wrapped.name)
        notify = Interest(RNP_PREFIX + self.ctx.gateway_name + data.name, app_parameters=params,
                          lifetime_ms=round(self.ctx.reflexive_lifetime_s * 1000))
        self.ctx.endpoint.express(
            notify, lambda i, d, n=wrapped.name: self._acked(fw, n),
            lambda i, reason: None)
        return UnsolicitedDataVerdict.CACHE

    def _acked(self, fw: Forwarder, wrapped_name: Name) -> None:
        self.acked += 1
        self._release(fw, wrapped_name)

    def _release(self, fw: Forwarder, wrapped_name: Name) -> None:
        timer = self.items.pop(wrapped_name, None)
        if timer is not None:
            timer.cancel()
        fw.cs.erase(wrapped_name)

    def temporary_state(self) -> dict[str, int]:
        out = {"pinned_items": len(self.items)}
        if self.hop is not None and hasattr(self.hop, "temporary_state"):
            out.update(self.hop.temporary_state())  # type: ignore[attr-defined]
        return out


class DraftPushScheme(PushScheme):
    """The draft's push: random RNP in the first Interest, reverse state in PIT entries."""

    name = "push-draft"

    def reflexive_prefix(self) -> tuple[Name, bytes | None]:
        token = self.ctx.rng.getrandbits(64).to_bytes(8, "big")
        rnp = (*RFX_PREFIX, b"\x08\x08" + token)
        return rnp, reflexive_parameters(rnp)


class NodePushHooks(ForwarderHooks):
    """Unsolicited Data from the node's own application (its local face) is pushed to the
    gateway through ``uplink``, the node's LoRa face, given at construction (the face
    exists before the forwarder that adds it)."""

    def __init__(self, uplink: Face) -> None:
        self.uplink = uplink
        self.pushed = 0

    def on_unsolicited_data(self, fw: Forwarder, in_face: Face, data: Data) -> str:
        if not in_face.is_local:
            return UnsolicitedDataVerdict.DROP
        self.pushed += 1
        fw.on_outgoing_data(self.uplink, data)
        return UnsolicitedDataVerdict.CACHE


class PushingNode(NodeBehaviour):
    """The node produces items on its own and pushes each to the gateway, unsolicited, in
    its next uplink GTS (:class:`NodePushHooks` on the node's forwarder)."""

    pushes = True

    def hooks(self, uplink: Face) -> ForwarderHooks | None:
        return NodePushHooks(uplink)


class PushConsumer(ConsumerBehaviour):
    """Serves ``/RNP``: fetches the reflexive name the notification names, then acknowledges
    the notification. One fetch per notification name, however often it is retransmitted."""

    def __init__(self) -> None:
        self.notifications = 0
        self._fetching: set[Name] = set()

    def start(self, host: ConsumerHost) -> None:
        host.endpoint.serve(RNP_PREFIX, lambda notify: self._on_notification(host, notify))

    def _on_notification(self, host: ConsumerHost, notify: Interest) -> None:
        if notify.name in self._fetching:
            return                        # a retransmitted notification: one fetch is enough
        self.notifications += 1
        self._fetching.add(notify.name)
        rnp = read_reflexive_prefix(notify.app_parameters)
        item_name = tuple(c for c in notify.name[2:] if c[0] != TYPE_PARAMS_SHA256)
        fetch_name = (rnp if rnp is not None else RPT_PREFIX + notify.name[1:2]) + item_name
        host.endpoint.express(
            Interest(fetch_name, lifetime_ms=host.lifetime_ms),
            lambda i, d: self._fetched(host, notify, item_name, d),
            lambda i, reason: self._fetching.discard(notify.name))

    def _fetched(self, host: ConsumerHost, notify: Interest, item_name: Name,
                 wrapped: Data) -> None:
        self._fetching.discard(notify.name)
        try:
            inner = decode_data(wrapped.content)
        except DecodeError:
            return
        if inner.name == item_name:
            host.log.finished(item_name, host.kernel.now(), "delivered")
        host.endpoint.put(ack(notify.name))


def _push(ctx: GatewayContext) -> GatewayScheme:
    return PushScheme(ctx)


def _push_draft(ctx: GatewayContext) -> GatewayScheme:
    return DraftPushScheme(ctx, PitReflexiveHop())


CONFIGS = (
    SchemeConfig(
        name="push", description="reflexive push, artifact (/RNP, /RPT, temporary FIB routes)",
        consumer=(4.0, 1000.0, 4), forwarder=(4.0, 1000.0, 4), gateway_scheme=_push,
        consumer_behaviour=PushConsumer, node_behaviour=PushingNode, hop_hooks=FibReflexiveHop,
        transaction_deadline_s=120.0,
    ),
    SchemeConfig(
        name="push-draft",
        description="reflexive push, IRTF draft (random RNP in the PIT entry, no FIB change)",
        consumer=(4.0, 1000.0, 4), forwarder=(4.0, 1000.0, 4), gateway_scheme=_push_draft,
        consumer_behaviour=PushConsumer, node_behaviour=PushingNode, hop_hooks=PitReflexiveHop,
        transaction_deadline_s=120.0,
    ),
)
