"""NFD's nonce rules: CCN-lite retransmissions (same nonce, same face) are not loops, and a
satisfied non-MustBeFresh entry leaves no dead nonce behind."""

from __future__ import annotations

from dticn.forwarder.face import LinkType, RecordingFace
from dticn.forwarder.forwarder import Forwarder
from dticn.packets import Interest, decode_packet, name_from_str
from dticn.sim.kernel import EventKernel


def _retransmit() -> tuple[int, list[object]]:
    kernel = EventKernel()
    fw = Forwarder(kernel)
    down, up = RecordingFace(), RecordingFace()
    fw.add_face(down)
    fw.add_face(up)
    fw.add_route(name_from_str("/a"), up.face_id)
    wire = Interest(name_from_str("/a/1"), nonce=7, lifetime_ms=4000).encode()
    down.deliver(wire)
    kernel.run(until=1.0)
    down.deliver(wire)                       # CCN-lite INR: the same wire again
    return len(up.sent), [decode_packet(w) for w in down.sent]


def test_same_face_same_nonce_is_a_retransmission_not_a_loop() -> None:
    forwarded, back = _retransmit()
    assert forwarded == 2 and back == []


def test_a_loop_from_another_face_is_still_a_loop() -> None:
    kernel = EventKernel()
    fw = Forwarder(kernel)
    a, b, up = RecordingFace(), RecordingFace(), RecordingFace()
    for f in (a, b, up):
        fw.add_face(f)
    fw.add_route(name_from_str("/a"), up.face_id)
    wire = Interest(name_from_str("/a/1"), nonce=7).encode()
    a.deliver(wire)
    b.deliver(wire)
    assert len(up.sent) == 1 and fw.counters.drops["loop"] == 1


def test_retransmission_after_the_data_is_answered_from_the_cs_not_nacked() -> None:
    from dticn.packets import Data

    kernel = EventKernel()
    fw = Forwarder(kernel)
    down, up = RecordingFace(), RecordingFace()
    fw.add_face(down)
    fw.add_face(up)
    fw.add_route(name_from_str("/a"), up.face_id)
    wire = Interest(name_from_str("/a/1"), nonce=7, lifetime_ms=4000).encode()
    down.deliver(wire)
    up.deliver(Data(name_from_str("/a/1"), b"x", freshness_ms=10_000).encode())
    down.take()
    kernel.run(until=1.0)
    down.deliver(wire)                       # same nonce, 1 s later: NFD answers from the CS
    [answer] = [decode_packet(w) for w in down.take()]
    assert isinstance(answer, Data) and fw.counters.cs_hits == 1


def test_a_retransmission_on_a_multi_access_face_is_still_a_loop() -> None:
    kernel = EventKernel()
    fw = Forwarder(kernel)
    radio = RecordingFace(link_type=LinkType.MULTI_ACCESS)
    up = RecordingFace()
    fw.add_face(radio)
    fw.add_face(up)
    fw.add_route(name_from_str("/a"), up.face_id)
    wire = Interest(name_from_str("/a/1"), nonce=7, lifetime_ms=4000).encode()
    radio.deliver(wire)
    radio.deliver(wire)       # on a broadcast medium our own copy may come back: a loop
    assert len(up.sent) == 1 and fw.counters.drops["loop"] == 1
