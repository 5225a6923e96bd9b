"""Every packet the forwarder sends reaches the face with its kind and the packet the
forwarder holds, so a link's policy and observers never decode it again; a raw-bytes face
(a socket) gets the very same bytes through ``transmit``."""

from __future__ import annotations

from dticn.forwarder.face import Face, PacketKind, RecordingFace
from dticn.forwarder.forwarder import Forwarder
from dticn.packets import Data, Interest, decode_packet, name_from_str
from dticn.sim.kernel import EventKernel

N = name_from_str


class TypedFace(Face):
    """Keeps ``(frame, kind, packet)`` of every frame, as a typed link driver sees them."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__("typed://", **kwargs)  # type: ignore[arg-type]
        self.seen: list[tuple[bytes, PacketKind | None, Interest | Data | None]] = []

    def transmit(self, frame: bytes) -> None:
        raise AssertionError("a typed face is never handed bare bytes by the forwarder")

    def transmit_typed(self, frame: bytes, kind: PacketKind | None,
                       packet: Interest | Data | None) -> None:
        self.seen.append((frame, kind, packet))


def test_interest_data_nack_and_fragments_arrive_typed() -> None:
    fw = Forwarder(EventKernel())
    down, up, small = TypedFace(), TypedFace(), TypedFace(mtu=116, sequence_width=2)
    for face in (down, up, small):
        fw.add_face(face)
    fw.add_route(N("/a"), up.face_id)
    fw.add_route(N("/big"), up.face_id)
    down.deliver(Interest(N("/a/1"), nonce=1).encode())
    ((wire, kind, interest),) = up.seen
    assert kind is PacketKind.INTEREST and isinstance(interest, Interest)
    assert interest.name == N("/a/1") and wire == interest.wire
    assert fw.pit.find(interest) is not None             # the very packet the PIT holds
    up.deliver(Data(N("/a/1"), b"x").encode())
    wire, kind, data = down.seen[-1]
    assert kind is PacketKind.DATA and isinstance(data, Data) and wire == data.encode()
    down.deliver(Interest(N("/nowhere"), nonce=2).encode())
    wire, kind, packet = down.seen[-1]
    assert kind is PacketKind.NACK and packet is None
    assert decode_packet(wire).nack_reason is not None   # type: ignore[union-attr]
    small.deliver(Interest(N("/big/1"), nonce=3).encode())
    up.deliver(Data(N("/big/1"), bytes(300)).encode())
    kinds = {(k, p.name if p is not None else None) for _, k, p in small.seen}
    assert kinds == {(PacketKind.FRAGMENT, N("/big/1"))} and len(small.seen) > 1


def test_raw_bytes_faces_get_the_same_frames_through_transmit() -> None:
    fw = Forwarder(EventKernel())
    down, up = RecordingFace(), RecordingFace()
    typed = TypedFace()
    for face in (down, up, typed):
        fw.add_face(face)
    fw.add_route(N("/a"), up.face_id)
    fw.add_route(N("/a"), typed.face_id)
    fw.set_strategy(N("/a"), "multicast")
    down.deliver(Interest(N("/a/1"), nonce=1).encode())
    assert up.take() == [typed.seen[0][0]]
    raw = Interest(N("/x"), nonce=9).encode()
    typed.send(raw)                                       # untyped: kind unknown
    assert typed.seen[-1] == (raw, None, None)
