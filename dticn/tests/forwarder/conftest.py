"""Shared helpers: a forwarder on the EventKernel with recording faces."""

from __future__ import annotations

import pytest

from dticn.forwarder.face import RecordingFace
from dticn.forwarder.forwarder import Forwarder
from dticn.forwarder.settings import ForwarderConfig
from dticn.packets import Data, Interest, LpPacket, decode_packet, name_from_str
from dticn.sim.kernel import EventKernel


class Node:
    """A forwarder with a kernel and helpers to record what each face sent."""

    def __init__(self, config: ForwarderConfig | None = None, **kwargs: object) -> None:
        self.kernel = EventKernel()
        self.fw = Forwarder(self.kernel, config, **kwargs)  # type: ignore[arg-type]

    def face(self, **kwargs: object) -> RecordingFace:
        f = RecordingFace(**kwargs)
        self.fw.add_face(f)
        return f

    @staticmethod
    def interest(uri: str, nonce: int, **kw: object) -> bytes:
        return Interest(name_from_str(uri), nonce=nonce, **kw).encode()  # type: ignore[arg-type]

    @staticmethod
    def data(uri: str, content: bytes = b"x", **kw: object) -> bytes:
        return Data(name_from_str(uri), content, **kw).encode()  # type: ignore[arg-type]

    @staticmethod
    def decoded(face: RecordingFace) -> list[Interest | Data | LpPacket]:
        return [decode_packet(w) for w in face.take()]


@pytest.fixture
def node() -> Node:
    return Node()
