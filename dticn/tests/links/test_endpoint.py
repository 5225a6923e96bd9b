"""The local endpoint: one callback per Interest, deferred delivery, serving prefixes."""

from __future__ import annotations

import random

import pytest

from dticn.forwarder.forwarder import Forwarder
from dticn.links.app_endpoint import Endpoint
from dticn.packets import Data, Interest, name_from_str
from dticn.sim.kernel import EventKernel

N = name_from_str


def _pair() -> tuple[EventKernel, Endpoint, Endpoint]:
    kernel = EventKernel()
    fw = Forwarder(kernel)
    return kernel, Endpoint(kernel, fw, random.Random(1)), Endpoint(kernel, fw, random.Random(2))


def test_express_and_serve_through_a_forwarder() -> None:
    kernel, consumer, producer = _pair()
    producer.serve(N("/p"), lambda i: producer.put(Data(i.name, b"hi")))
    got: list[bytes] = []
    consumer.express(Interest(N("/p/1"), lifetime_ms=1000), lambda i, d: got.append(d.content),
                     lambda i, r: got.append(r.encode()))
    kernel.run()
    assert got == [b"hi"] and consumer.pending_count == 0


def test_timeout_and_network_nack_each_fire_once() -> None:
    kernel, consumer, _ = _pair()
    reasons: list[str] = []
    consumer.express(Interest(N("/none/1"), lifetime_ms=500), lambda i, d: None,
                     lambda i, r: reasons.append(r))
    kernel.run()
    assert reasons == ["nack:150"]                    # no route: NoRoute, not also a timeout
    silent = Endpoint(kernel, consumer.forwarder, random.Random(3))
    silent.serve(N("/slow"), lambda i: None)          # never answers
    consumer.express(Interest(N("/slow/1"), lifetime_ms=500), lambda i, d: None,
                     lambda i, r: reasons.append(r))
    kernel.run()
    assert reasons == ["nack:150", "timeout"]


def test_an_endpoint_built_before_its_forwarder_works_once_its_face_is_added() -> None:
    kernel = EventKernel()
    early = Endpoint(kernel, None, random.Random(1), "app://early")
    assert early.face_id == 0
    with pytest.raises(ValueError, match="route=False"):
        early.serve(N("/p"), lambda i: None)
    fw = Forwarder(kernel)
    fw.add_face(early.face)
    early.serve(N("/p"), lambda i: early.put(Data(i.name, b"hi")), route=False)
    fw.add_route(N("/p"), early.face_id)
    consumer = Endpoint(kernel, fw, random.Random(2))
    got: list[bytes] = []
    consumer.express(Interest(N("/p/1"), lifetime_ms=1000), lambda i, d: got.append(d.content),
                     lambda i, r: got.append(r.encode()))
    kernel.run()
    assert early.face_id >= 256 and got == [b"hi"]
