"""pcap traces of a forwarder's faces, in the framing NDN's Wireshark dissector reads.

Every frame a face receives or sends is written as Ethernet / IPv4 / UDP with both ports
6363 (the NDN port; NDN's Lua dissector, ndn-tools' ``ndn.lua``, dissects UDP 6363;
stock Wireshark 4.0 has no NDN dissector and shows UDP) and the frame as the UDP
payload, whatever the face's real link is (unix socket, TCP, UDP). Addresses name
the faces, not the real endpoints: the forwarder is 127.0.0.1, face ``N`` is
``10.<N>>16>.<N>>8 & 255>.<N & 255>`` (face 256 is 10.0.1.0), so ``ip.addr == 10.0.1.0``
filters one face. Timestamps are wall-clock (what the injected ``wall_clock`` returns), or
the simulator's time in simulated runs (``dticn reproduce --pcap``).

File format: classic pcap (magic a1b2c3d4, version 2.4, microsecond timestamps,
LINKTYPE_ETHERNET = 1), which every pcap reader accepts; :class:`PcapFile` writes it for
any link type (the LoRa traces' 802.15.4 too).
"""

from __future__ import annotations

import struct
import time
from collections.abc import Callable
from typing import BinaryIO

from dticn.forwarder.face import Face
from dticn.forwarder.forwarder import Forwarder

NDN_UDP_PORT = 6363
LINKTYPE_ETHERNET = 1
FORWARDER_IP = bytes((127, 0, 0, 1))
_ETH_HEADER = b"\x02\x00\x00\x00\x00\x02" + b"\x02\x00\x00\x00\x00\x01" + b"\x08\x00"
_SNAPLEN = 65535


def face_ip(face_id: int) -> bytes:
    """The IPv4 address standing for ``face_id`` in traces."""
    return bytes((10, (face_id >> 16) & 0xFF, (face_id >> 8) & 0xFF, face_id & 0xFF))


def _ipv4_udp(src: bytes, dst: bytes, payload: bytes) -> bytes:
    udp = struct.pack("!HHHH", NDN_UDP_PORT, NDN_UDP_PORT, 8 + len(payload), 0) + payload
    header = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0,
                         src, dst)
    total = sum(struct.unpack("!10H", header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    header = header[:10] + struct.pack("!H", ~total & 0xFFFF) + header[12:]
    return header + udp


class PcapFile:
    """A classic pcap file of one link type: the header once, then one record per packet.

    The one place that knows the format (the pcap-savefile draft, draft-ietf-opsawg-pcap:
    24-byte header magic/version/snaplen/LinkType, then a 16-byte record header of seconds,
    microseconds, captured and original length before each packet), for NDN/Ethernet
    traces (:class:`PcapWriter`) and LoRa/802.15.4 traces (:mod:`dticn.net.lora_pcap`).
    """

    def __init__(self, path: str, linktype: int) -> None:
        self._file: BinaryIO = open(path, "wb")  # noqa: SIM115 - closed in close()
        self._file.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, _SNAPLEN, linktype))
        self.linktype = linktype
        self.records = 0

    @property
    def closed(self) -> bool:
        return self._file.closed

    def write(self, timestamp: float, packet: bytes) -> None:
        """One record at ``timestamp`` seconds (rounded to the microsecond); nothing once
        closed (a face may still send while the process shuts down)."""
        if self._file.closed:
            return
        usec_total = round(timestamp * 1e6)
        if usec_total < 0:
            raise ValueError(f"timestamp {timestamp}: pcap times start at 0 (the epoch)")
        seconds, usec = divmod(usec_total, 1_000_000)
        self._file.write(struct.pack("<IIII", seconds, usec, len(packet), len(packet)))
        self._file.write(packet)
        self.records += 1

    def flush(self) -> None:
        """Push buffered records to the file (a reader may open it while we run)."""
        if not self._file.closed:
            self._file.flush()

    def close(self) -> None:
        """Flush and close the file."""
        self._file.close()


def read_records(path: str) -> tuple[int, list[tuple[float, bytes]]]:
    """``(linktype, [(timestamp, packet), ...])`` of a microsecond pcap file as
    :class:`PcapFile` writes it."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        raise ValueError(f"{path}: {len(data)} bytes, shorter than a pcap header")
    magic, _maj, _min, _tz, _sig, _snap, linktype = struct.unpack_from("<IHHiIII", data)
    if magic != 0xA1B2C3D4:
        raise ValueError(f"{path}: not a little-endian microsecond pcap (magic {magic:#x})")
    out = []
    pos = 24
    while pos + 16 <= len(data):
        sec, usec, incl, _orig = struct.unpack_from("<IIII", data, pos)
        out.append((sec + usec / 1e6, data[pos + 16:pos + 16 + incl]))
        pos += 16 + incl
    return linktype, out


class PcapWriter:
    """Writes face traffic to ``path``; :meth:`tap` is what faces call per frame.

    ``wall_clock`` gives each record's time: wall-clock by default, or a simulated clock
    (``lambda: epoch + kernel.now()``) in the simulator.
    """

    def __init__(self, path: str, wall_clock: Callable[[], float] = time.time) -> None:
        self._pcap = PcapFile(path, LINKTYPE_ETHERNET)
        self._clock = wall_clock

    @property
    def frames(self) -> int:
        """Records written so far."""
        return self._pcap.records

    def tap(self, face: Face, frame: bytes, inbound: bool) -> None:
        """Record one frame of ``face`` (``inbound``: received by the forwarder)."""
        if self._pcap.closed:
            return
        peer = face_ip(face.face_id)
        src, dst = (peer, FORWARDER_IP) if inbound else (FORWARDER_IP, peer)
        self._pcap.write(self._clock(), _ETH_HEADER + _ipv4_udp(src, dst, frame))

    def flush(self) -> None:
        """Push buffered records to the file (a reader may open it while we run)."""
        self._pcap.flush()

    def close(self) -> None:
        """Flush and close the file."""
        self._pcap.close()


def trace_forwarder(fw: Forwarder, path: str,
                    clock: Callable[[], float] = time.time) -> PcapWriter:
    """Open ``path`` and tap every face of ``fw``, those it has and those added later;
    ``clock`` stamps the records (wall-clock, or the simulator's time)."""
    writer = PcapWriter(path, clock)
    for face in fw.faces.values():
        face.taps.append(writer.tap)
    fw.face_taps.append(writer.tap)
    return writer


def read_pcap(path: str) -> list[tuple[float, bytes, bytes, bytes]]:
    """``(timestamp, src_ip, dst_ip, ndn_frame)`` per record of a trace written by
    :class:`PcapWriter` (what the tests check; Wireshark reads the same file)."""
    linktype, records = read_records(path)
    if linktype != LINKTYPE_ETHERNET:
        raise ValueError(f"{path}: LinkType {linktype}, not an Ethernet pcap written by "
                         "PcapWriter")
    out = []
    for timestamp, packet in records:
        ip = packet[14:34]
        out.append((timestamp, ip[12:16], ip[16:20], packet[42:]))
    return out
