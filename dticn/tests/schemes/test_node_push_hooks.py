"""A pushing node's hooks get its LoRa uplink at construction, before the forwarder that
adds the face exists, and push only what the node's own application produced."""

from __future__ import annotations

import random

from dticn.forwarder.face import FaceScope, RecordingFace
from dticn.forwarder.forwarder import Forwarder
from dticn.links.app_endpoint import Endpoint
from dticn.packets import Data, decode_packet, name_from_str
from dticn.schemes.push import NodePushHooks, PushingNode
from dticn.sim.kernel import EventKernel

N = name_from_str


def test_unsolicited_data_of_the_app_goes_up_the_uplink_other_data_is_dropped() -> None:
    kernel = EventKernel()
    uplink = RecordingFace("lora://0")
    hooks = PushingNode().hooks(uplink)
    assert isinstance(hooks, NodePushHooks) and hooks.uplink is uplink
    fw = Forwarder(kernel, hooks=hooks)
    fw.add_face(uplink)
    app = Endpoint(kernel, fw, random.Random(1), "app://node1")
    app.put(Data(N("/node1/1"), b"item"))
    uplink.deliver(Data(N("/node1/2"), b"from the link").encode())
    other = RecordingFace("tcp://peer", scope=FaceScope.NON_LOCAL)
    fw.add_face(other)
    other.deliver(Data(N("/node1/3"), b"stranger").encode())
    sent = [decode_packet(f) for f in uplink.take()]
    assert [p.name for p in sent] == [N("/node1/1")]  # type: ignore[union-attr]
    assert hooks.pushed == 1 and fw.counters.drops["unsolicited_data"] == 2
