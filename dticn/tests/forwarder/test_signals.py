"""A gateway's signals (wait hint, NACK) answer one downstream and are never cached
(issue 13, item 2)."""

from __future__ import annotations

from dticn.forwarder.face import Face
from dticn.forwarder.forwarder import Forwarder
from dticn.forwarder.hooks import ForwarderHooks
from dticn.forwarder.pit import PitEntry
from dticn.forwarder.settings import ForwarderConfig
from dticn.packets import Data, Interest, name_from_str

from .conftest import Node

N = name_from_str
WAIT = 1024


class HintFirstDownstream(ForwarderHooks):
    """Answers the Interest of face ``hinted`` with a signal; forwards everyone else's."""

    def __init__(self) -> None:
        self.hinted = -1

    def on_interest_propagate(self, fw: Forwarder, in_face: Face, interest: Interest,
                              entry: PitEntry) -> bool:
        if in_face.face_id != self.hinted:
            return False
        fw.answer_in_record(entry, in_face.face_id,
                            Data(interest.name, b"", content_type=WAIT, freshness_ms=0))
        return True


def test_a_hint_to_one_downstream_leaves_the_other_pending() -> None:
    hooks = HintFirstDownstream()
    node = Node(hooks=hooks)
    own, consumer, producer = node.face(), node.face(), node.face()
    hooks.hinted = consumer.face_id
    node.fw.add_route(N("/a"), producer.face_id)
    own.deliver(node.interest("/a/1", 1))               # e.g. the gateway's own request
    consumer.deliver(node.interest("/a/1", 2))          # same PIT entry (same flags)
    [hint] = node.decoded(consumer)
    assert isinstance(hint, Data) and hint.content_type == WAIT
    assert own.sent == [] and len(node.fw.pit) == 1      # the own request still waits
    assert len(producer.take()) == 1                     # forwarded once
    producer.deliver(node.data("/a/1", b"item", freshness_ms=10_000))
    [got] = node.decoded(own)
    assert isinstance(got, Data) and got.content == b"item"
    assert len(node.fw.pit) == 0


def test_a_lone_hinted_entry_is_finished() -> None:
    hooks = HintFirstDownstream()
    node = Node(hooks=hooks)
    consumer = node.face()
    hooks.hinted = consumer.face_id
    consumer.deliver(node.interest("/a/1", 1))
    assert len(node.decoded(consumer)) == 1 and len(node.fw.pit) == 0
    assert len(node.fw.cs) == 0                          # a hint is never cached


def test_signals_pass_through_but_are_not_cached() -> None:
    node = Node(ForwarderConfig(uncached_content_types=frozenset({3, WAIT})))
    consumer, upstream = node.face(), node.face()
    node.fw.add_route(N("/a"), upstream.face_id)
    consumer.deliver(node.interest("/a/1", 1))           # no MustBeFresh
    upstream.take()
    upstream.deliver(node.data("/a/1", b"", content_type=WAIT, freshness_ms=0))
    assert len(node.decoded(consumer)) == 1 and len(node.fw.cs) == 0
    node.kernel.run(until=1.0)
    consumer.deliver(node.interest("/a/1", 2))           # asks again: upstream, not the CS
    assert len(upstream.take()) == 1 and consumer.sent == []
    upstream.deliver(node.data("/a/1", b"item", freshness_ms=10_000))
    assert len(node.fw.cs) == 1                          # content is cached as ever
