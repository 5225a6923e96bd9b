"""Internet link (delay, seeded loss, counting) and the packet classifier."""

from __future__ import annotations

import random

from dticn.forwarder.face import RecordingFace
from dticn.links.internet import InternetLink
from dticn.links.observer import PacketCounter, classify
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
    assert registration_in_cap(Interest(N("/reg/xid"), nonce=1).encode()) == "cap"
    assert registration_in_cap(Interest(N("/xid/1"), nonce=1).encode()) == "gts"
    assert registration_in_cap(Data(N("/reg/xid")).encode()) == "gts"
    assert RecordingFace  # the faces themselves are covered by the forwarder tests
