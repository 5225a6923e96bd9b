"""Internet link (delay, seeded loss, counting) and the packet classifier."""

from __future__ import annotations

import random

from dticn.forwarder.face import PacketKind, RecordingFace
from dticn.forwarder.forwarder import Forwarder
from dticn.links.internet import InternetLink
from dticn.links.observer import PacketCounter, classify, describe
from dticn.packets import Data, Interest, NackReason, encode_nack, fragment, name_from_str
from dticn.schemes.signalling import registration_in_cap
from dticn.sim.kernel import EventKernel

N = name_from_str


def _link(loss: float, seed: int) -> tuple[EventKernel, InternetLink, list[float]]:
    kernel = EventKernel()
    link = InternetLink(kernel, "l", delay_s=0.02, loss=loss, rng=random.Random(seed),
                        counter=PacketCounter(), directions=("up", "down"))
    arrivals: list[float] = []
    link.b.set_receiver(lambda face, frame: arrivals.append(kernel.now()))
    return kernel, link, arrivals


def test_delay_and_counting() -> None:
    kernel, link, arrivals = _link(0.0, 1)
    link.a.send(Interest(N("/a"), nonce=1).encode())
    kernel.run()
    assert arrivals == [0.02]
    assert link.counter.as_dict() == {"l:up:interest": 1}


def test_loss_is_bernoulli_and_reproducible() -> None:
    def lost(seed: int) -> int:
        kernel, link, arrivals = _link(0.25, seed)
        for k in range(400):
            link.a.send(Interest(N(f"/a/{k}"), nonce=k).encode())
        kernel.run()
        assert len(arrivals) + link.lost == 400
        return link.lost

    assert lost(7) == lost(7)
    assert 60 < lost(7) < 140


def test_classify_every_kind() -> None:
    interest = Interest(N("/a"), nonce=1).encode()
    assert classify(interest) == "interest"
    assert classify(Data(N("/a"), b"x").encode()) == "data"
    assert classify(encode_nack(interest, NackReason.NO_ROUTE)) == "nack"
    big = Data(N("/a"), bytes(300)).encode()
    assert {classify(f) for f in fragment(big, 116, 0, 2)} == {"fragment"}
    assert classify(b"\x99\x00") == "other"


def test_registration_goes_in_the_cap_everything_else_in_the_gts() -> None:
    reg = Interest(N("/reg/xid"), nonce=1)
    assert registration_in_cap(PacketKind.INTEREST, reg) == "cap"
    assert registration_in_cap(PacketKind.INTEREST, Interest(N("/xid/1"), nonce=1)) == "gts"
    assert registration_in_cap(PacketKind.DATA, Data(N("/reg/xid"))) == "gts"
    assert registration_in_cap(PacketKind.FRAGMENT, reg) == "gts"
    assert registration_in_cap(PacketKind.NACK, None) == "gts"


def test_counter_reads_the_kind_it_is_given_and_decodes_only_untyped_frames() -> None:
    counter = PacketCounter()
    counter.count("l", "up", b"\x99\x00", PacketKind.DATA)   # never decoded: not NDN at all
    counter.count("l", "up", b"\x99\x00")
    assert counter.as_dict() == {"l:up:data": 1, "l:up:other": 1}
    assert describe(Interest(N("/a"), nonce=1).encode())[1].name == N("/a")  # type: ignore


def test_a_forwarder_sends_typed_frames_over_the_link() -> None:
    """Interest, Data and Nack cross the link counted by the kind the forwarder gave."""
    kernel = EventKernel()
    link = InternetLink(kernel, "l", rng=random.Random(1), counter=PacketCounter(),
                        directions=("up", "down"))
    consumer, producer = Forwarder(kernel), Forwarder(kernel)
    up, _ = link.connect(consumer, producer)
    app, origin = RecordingFace(), RecordingFace()
    consumer.add_face(app)
    producer.add_face(origin)
    consumer.add_route(N("/a"), up)
    producer.add_route(N("/a"), origin.face_id)
    app.deliver(Interest(N("/a/1"), nonce=1).encode())
    app.deliver(Interest(N("/b/1"), nonce=2).encode())      # no route: Nacked at once
    kernel.run(until=0.1)
    origin.deliver(Data(N("/a/1"), b"x").encode())
    kernel.run(until=0.2)
    assert link.counter.as_dict() == {"l:up:interest": 1, "l:down:data": 1}
    assert [classify(f) for f in app.take()] == ["nack", "data"]
