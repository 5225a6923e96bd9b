"""Our MAC frames as IEEE 802.15.4 bytes, for traces that Wireshark's ``wpan`` dissector reads.

The simulator carries :class:`~dticn.mac.frames.Frame` objects (kind, addresses, sequence
number, length, payload), not bytes; this module writes the MAC header a radio would send
so a trace (:mod:`dticn.net.lora_pcap`) shows beacons, data frames, ACKs and association
commands. Clause numbers are IEEE 802.15.4-2015's.

Choices (what is encoded, and what is not):

* Frame version 0b01 (IEEE 802.15.4-2006, 7.2.1.10 of -2015): its PAN ID Compression rule
  is the simple one (both addresses present, one PAN ID), which every dissector knows. Our
  DSME beacons are enhanced beacons with IEs in the standard; here they are 2006 beacons
  (7.3.1) with a superframe specification (7.3.1.3), an empty GTS field and an empty
  pending address field: enough for Wireshark to show BO, SO and the final CAP slot.
* Short (16-bit) addresses everywhere (Addressing Mode 0b10, 7.2.1.8/7.2.1.11): the model
  has no extended addresses. The association commands (7.5.2, 7.5.3) carry extended
  addresses in the standard; ours are short, and the response's status is success.
* No security, no IEs, no frame pending, sequence number present (7.2.1.2-7.2.1.7).
* No FCS (7.2.10): traces use LINKTYPE_IEEE802_15_4_NOFCS (230).

The encoded length is the MAC header and payload as the standard lays them out; the
simulated airtime comes from ``Frame.psdu_bytes`` (``dsme.toml``'s sizes, FCS included),
which for beacons also counts the DSME fields not written here.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass

from dticn.mac.frames import Frame, FrameKind

DEFAULT_PAN_ID = 0xD71C
"""PAN identifier written in traces (the model has one PAN; any value would do)."""


class FrameType(enum.IntEnum):
    """Frame Type field, bits 0-2 of the Frame Control field (7.2.1.1, Table 7-1)."""

    BEACON = 0b000
    DATA = 0b001
    ACK = 0b010
    MAC_COMMAND = 0b011


class CommandId(enum.IntEnum):
    """Command Frame Identifier (7.5.1, Table 7-49)."""

    ASSOCIATION_REQUEST = 0x01
    ASSOCIATION_RESPONSE = 0x02


ADDR_NONE = 0b00
ADDR_SHORT = 0b10
FRAME_VERSION_2006 = 0b01
# 7.5.2.2: Capability Information; bit 7 Allocate Address (the coordinator gives a short one).
CAPABILITY_ALLOCATE_ADDRESS = 0x80
ASSOCIATION_SUCCESSFUL = 0x00   # 7.5.3.3, Table 7-50

_KIND_TYPE = {
    FrameKind.BEACON: FrameType.BEACON,
    FrameKind.DATA: FrameType.DATA,
    FrameKind.ACK: FrameType.ACK,
    FrameKind.ASSOCIATION_REQUEST: FrameType.MAC_COMMAND,
    FrameKind.ASSOCIATION_RESPONSE: FrameType.MAC_COMMAND,
}


@dataclass(frozen=True)
class SuperframeSpec:
    """What a beacon's Superframe Specification field says (7.3.1.3, Figure 7-18)."""

    beacon_order: int
    superframe_order: int
    final_cap_slot: int = 8
    pan_coordinator: bool = True
    association_permit: bool = True

    def encode(self) -> bytes:
        """Two octets: BO bits 0-3, SO 4-7, Final CAP Slot 8-11, Battery Life Extension 12
        (0), PAN Coordinator 14, Association Permit 15."""
        for name, value in (("beacon_order", self.beacon_order),
                            ("superframe_order", self.superframe_order),
                            ("final_cap_slot", self.final_cap_slot)):
            if not 0 <= value <= 15:
                raise ValueError(f"{name}={value} does not fit 4 bits (0..15)")
        word = (self.beacon_order | self.superframe_order << 4 | self.final_cap_slot << 8
                | int(self.pan_coordinator) << 14 | int(self.association_permit) << 15)
        return struct.pack("<H", word)


def frame_control(frame_type: FrameType, *, ack_request: bool, pan_id_compression: bool,
                  dst_mode: int, src_mode: int) -> int:
    """The 16-bit Frame Control field (7.2.1, Figure 7-2): Frame Type 0-2, Security Enabled 3,
    Frame Pending 4, AR 5, PAN ID Compression 6, Sequence Number Suppression 8, IE Present 9,
    Destination Addressing Mode 10-11, Frame Version 12-13, Source Addressing Mode 14-15."""
    return (int(frame_type) | int(ack_request) << 5 | int(pan_id_compression) << 6
            | dst_mode << 10 | FRAME_VERSION_2006 << 12 | src_mode << 14)


def encode_frame(frame: Frame, *, pan_id: int = DEFAULT_PAN_ID,
                 superframe: SuperframeSpec | None = None) -> bytes:
    """The MPDU of ``frame`` without FCS (7.2, Figure 7-1: Frame Control, Sequence Number,
    addressing fields, frame payload).

    Args:
        pan_id: the PAN ID in the addressing fields (7.2.1.6 / 7.2.2-7.2.5).
        superframe: what beacons announce; None writes BO = SO = 15 (non-beacon PAN).
    """
    kind = FrameKind(frame.kind)
    ftype = _KIND_TYPE[kind]
    seq = frame.seq & 0xFF
    if ftype is FrameType.ACK:
        # Imm-Ack (7.3.3): Frame Control and Sequence Number, no addressing fields.
        fcf = frame_control(ftype, ack_request=False, pan_id_compression=False,
                            dst_mode=ADDR_NONE, src_mode=ADDR_NONE)
        return struct.pack("<HB", fcf, seq)
    if ftype is FrameType.BEACON:
        # Beacon (7.3.1): source PAN ID and address only; superframe spec, GTS (7.3.1.4:
        # descriptor count 0, permit 0), pending addresses (7.3.1.5: none), no payload.
        fcf = frame_control(ftype, ack_request=False, pan_id_compression=False,
                            dst_mode=ADDR_NONE, src_mode=ADDR_SHORT)
        spec = superframe or SuperframeSpec(15, 15, final_cap_slot=15,
                                            association_permit=False)
        return (struct.pack("<HBHH", fcf, seq, pan_id, frame.src & 0xFFFF)
                + spec.encode() + b"\x00" + b"\x00")
    # Data (7.3.2) and MAC command (7.3.4) frames: PAN ID compression, one destination PAN
    # ID, then destination and source short addresses.
    fcf = frame_control(ftype, ack_request=frame.ack_request, pan_id_compression=True,
                        dst_mode=ADDR_SHORT, src_mode=ADDR_SHORT)
    header = struct.pack("<HBHHH", fcf, seq, pan_id, frame.dst & 0xFFFF, frame.src & 0xFFFF)
    if kind is FrameKind.DATA:
        return header + frame.payload
    if kind is FrameKind.ASSOCIATION_REQUEST:
        return header + bytes((CommandId.ASSOCIATION_REQUEST, CAPABILITY_ALLOCATE_ADDRESS))
    # Association response (7.5.3): the short address allocated, then the status.
    return header + struct.pack("<BHB", CommandId.ASSOCIATION_RESPONSE, frame.dst & 0xFFFF,
                                ASSOCIATION_SUCCESSFUL)


@dataclass(frozen=True)
class DecodedFrame:
    """The fields a trace reader checks (what :func:`decode_frame` reads back)."""

    frame_type: FrameType
    seq: int
    ack_request: bool
    pan_id: int | None
    dst: int | None
    src: int | None
    payload: bytes


def decode_frame(mpdu: bytes) -> DecodedFrame:
    """Read back what :func:`encode_frame` writes (frame version 2006, short or no addresses,
    no security, no IEs); anything else raises ``ValueError``."""
    if len(mpdu) < 3:
        raise ValueError(f"{len(mpdu)} bytes: an 802.15.4 MPDU has at least 3 (FCF, seq)")
    fcf, seq = struct.unpack_from("<HB", mpdu)
    ftype = FrameType(fcf & 0b111)
    if fcf & (1 << 3 | 1 << 9):
        raise ValueError("security or IEs present: not a frame this module writes")
    dst_mode, src_mode = (fcf >> 10) & 0b11, (fcf >> 14) & 0b11
    if {dst_mode, src_mode} - {ADDR_NONE, ADDR_SHORT}:
        raise ValueError("extended addresses: not a frame this module writes")
    pos = 3
    pan_id = dst = src = None
    if dst_mode:
        pan_id, dst = struct.unpack_from("<HH", mpdu, pos)
        pos += 4
    if src_mode:
        if not (fcf >> 6) & 1 or not dst_mode:
            pan_id = struct.unpack_from("<H", mpdu, pos)[0]
            pos += 2
        src = struct.unpack_from("<H", mpdu, pos)[0]
        pos += 2
    return DecodedFrame(ftype, seq, bool((fcf >> 5) & 1), pan_id, dst, src, mpdu[pos:])
