"""A fixed (CCN-lite) PIT lifetime wins by default; with ``pit_covers_in_records`` it is a
minimum and a longer InterestLifetime keeps the entry (the emulated gateway's setting)."""

from __future__ import annotations

import pytest

from dticn.forwarder.face import RecordingFace
from dticn.forwarder.forwarder import Forwarder
from dticn.forwarder.retx import RetxPolicy
from dticn.forwarder.settings import ForwarderConfig
from dticn.packets import Data, Interest, decode_packet, name_from_str
from dticn.sim.kernel import EventKernel


def _answer_after(covers: bool, lifetime_ms: int, data_at: float) -> list[object]:
    kernel = EventKernel()
    fw = Forwarder(kernel, ForwarderConfig(default_retx=RetxPolicy(pit_lifetime=64.0),
                                           pit_covers_in_records=covers))
    down, up = RecordingFace(), RecordingFace()
    fw.add_face(down)
    fw.add_face(up)
    fw.add_route(name_from_str("/a"), up.face_id)
    down.deliver(Interest(name_from_str("/a/1"), nonce=7, lifetime_ms=lifetime_ms).encode())
    kernel.run(until=data_at)
    up.deliver(Data(name_from_str("/a/1"), b"x").encode())
    return [decode_packet(w) for w in down.sent]


@pytest.mark.parametrize(("covers", "lifetime_ms", "data_at", "delivered"), [
    (False, 150_000, 65.0, False),   # CCN-lite: the entry dies at 64 s whatever was asked
    (True, 150_000, 65.0, True),     # the Interest's 150 s keep it
    (True, 150_000, 151.0, False),   # ...but not beyond them
    (True, 4_000, 30.0, False),      # a short Interest: entry kept 64 s, in-record expired
    (True, 4_000, 65.0, False),
])
def test_fixed_pit_lifetime_and_longer_interests(covers: bool, lifetime_ms: int,
                                                 data_at: float, delivered: bool) -> None:
    assert bool(_answer_after(covers, lifetime_ms, data_at)) is delivered
