"""Our MAC frames as IEEE 802.15.4 bytes: exact vectors worked out from 7.2 of the 2015
standard, and the read-back the trace tests rely on."""

from __future__ import annotations

import pytest

from dticn.mac.frames import BROADCAST, Frame, FrameKind
from dticn.mac.ieee802154 import (
    FrameType,
    SuperframeSpec,
    decode_frame,
    encode_frame,
)

# Frame Control words (7.2.1, LSB first): type | AR << 5 | PAN ID compression << 6 |
# dst mode << 10 | version << 12 | src mode << 14; short addresses are mode 0b10, 2006 is 0b01.
DATA_AR = 0b10_01_10_0_0_0_1_1_0_0_001      # 0x9861
ACK = 0b00_01_00_0_0_0_0_0_0_0_010          # 0x1002
BEACON = 0b10_01_00_0_0_0_0_0_0_0_000       # 0x9000
COMMAND_AR = 0b10_01_10_0_0_0_1_1_0_0_011   # 0x9863


def test_data_frame_bytes() -> None:
    frame = Frame(FrameKind.DATA, 1, 0, 7, 14, b"\x05\x01A", ack_request=True)
    assert DATA_AR == 0x9861
    # FCF, seq 7, PAN 0xd71c, dst 0x0000, src 0x0001 (little-endian), then the NDN bytes
    assert encode_frame(frame).hex() == "6198" "07" "1cd7" "0000" "0100" "050141"
    broadcast = Frame(FrameKind.DATA, 0, BROADCAST, 8, 12, b"\x06\x00")
    assert encode_frame(broadcast, pan_id=0x1234).hex() == "4198" "08" "3412" "ffff" "0000" "0600"


def test_imm_ack_is_frame_control_and_sequence_number_only() -> None:
    assert ACK == 0x1002
    assert encode_frame(Frame(FrameKind.ACK, 0, 1, 0x107, 5)).hex() == "0210" "07"


def test_beacon_carries_the_superframe_specification() -> None:
    assert BEACON == 0x9000
    beacon = Frame(FrameKind.BEACON, 0, BROADCAST, 3, 35)
    # BO 5, SO 3 -> 0x35; final CAP slot 8; PAN coordinator and association permit bits 14, 15
    assert encode_frame(beacon, superframe=SuperframeSpec(5, 3, 8)).hex() == (
        "0090" "03" "1cd7" "0000" "35c8" "00" "00")
    # without a spec: a non-beacon PAN's BO = SO = 15
    assert encode_frame(beacon)[7:9] == (0x0FFF | 0x4000).to_bytes(2, "little")


def test_association_commands() -> None:
    assert COMMAND_AR == 0x9863
    request = Frame(FrameKind.ASSOCIATION_REQUEST, 2, 0, 9, 20, ack_request=True)
    # command 0x01, capability: allocate address (bit 7)
    assert encode_frame(request).hex() == "6398" "09" "1cd7" "0000" "0200" "01" "80"
    response = Frame(FrameKind.ASSOCIATION_RESPONSE, 0, 2, 4, 25, ack_request=True)
    # command 0x02, the node's short address, status 0 (successful)
    assert encode_frame(response).hex() == "6398" "04" "1cd7" "0200" "0000" "02" "0200" "00"


@pytest.mark.parametrize("frame", [
    Frame(FrameKind.DATA, 3, 0, 200, 20, b"\x05\x03abc", ack_request=True),
    Frame(FrameKind.DATA, 0, 3, 1, 20, b"\x06\x03xyz"),
    Frame(FrameKind.ACK, 0, 3, 200, 5),
    Frame(FrameKind.BEACON, 0, BROADCAST, 9, 35),
    Frame(FrameKind.ASSOCIATION_REQUEST, 3, 0, 2, 20, ack_request=True),
], ids=lambda f: f.kind.value)
def test_decode_reads_back_what_encode_wrote(frame: Frame) -> None:
    out = decode_frame(encode_frame(frame))
    assert out.seq == frame.seq
    assert out.ack_request == frame.ack_request
    if frame.kind is FrameKind.ACK:
        assert (out.frame_type, out.src, out.dst, out.payload) == (FrameType.ACK, None, None, b"")
        return
    assert out.src == frame.src and out.pan_id == 0xD71C
    if frame.kind is FrameKind.DATA:
        assert (out.frame_type, out.dst, out.payload) == (FrameType.DATA, frame.dst,
                                                          frame.payload)


def test_bad_input_is_refused_with_the_reason() -> None:
    with pytest.raises(ValueError, match="4 bits"):
        SuperframeSpec(16, 3).encode()
    with pytest.raises(ValueError, match="at least 3"):
        decode_frame(b"\x41")
    with pytest.raises(ValueError, match="extended"):
        decode_frame(bytes((0x41, 0xCC, 0)) + bytes(20))
