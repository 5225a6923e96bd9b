"""Per-face packet kinds for NFD's FaceStatus: bare packets, Nacks, fragments, closing."""

from __future__ import annotations

from dticn.forwarder.face import RecordingFace
from dticn.forwarder.forwarder import Forwarder
from dticn.mgmt.face_traffic import DATA, INTEREST, NACK, FaceTraffic, classify
from dticn.packets import Data, Interest, LpPacket, NackReason, encode_nack, name_from_str
from dticn.packets.lp import fragment
from dticn.sim.kernel import EventKernel


def test_frames_are_classified_once_per_packet() -> None:
    interest = Interest(name_from_str("/a/b"), nonce=1).encode()
    data = Data(name_from_str("/a/b"), content=b"x" * 300).encode()
    frags = fragment(data, 127, 0, 2)
    assert len(frags) > 2
    assert classify(interest) == INTEREST and classify(data) == DATA
    assert classify(encode_nack(interest, NackReason.NO_ROUTE)) == NACK
    assert classify(LpPacket(fragment=interest, incoming_face_id=300).encode()) == INTEREST
    assert [classify(f) for f in frags] == [DATA] + [None] * (len(frags) - 1)
    assert classify(b"") is None and classify(b"\x64\x05\x00") is None  # truncated LP


def test_counts_by_direction_and_forgotten_on_close() -> None:
    fw = Forwarder(EventKernel())
    traffic = FaceTraffic(fw)
    face = RecordingFace()
    fw.add_face(face)
    interest = Interest(name_from_str("/a"), nonce=2).encode()
    traffic.tap(face, interest, True)
    traffic.tap(face, encode_nack(interest, NackReason.CONGESTION), False)
    counts = traffic.counts(face)
    assert (counts.in_interests, counts.out_nacks, counts.in_data) == (1, 1, 0)
    face.close()
    assert traffic.counts(face).in_interests == 0
