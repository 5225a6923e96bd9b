"""Stream (TCP, Unix) and datagram (UDP) faces over asyncio.

Stream framing is NDN's: each packet is one TLV, so the receiver reads TLV-TYPE and
TLV-LENGTH and waits for that many bytes. A frame longer than the packet limit is
skipped (read and discarded) and counted, so a hostile peer cannot make us buffer
unbounded data and the face stays up; malformed packets inside well-framed TLVs are the
forwarder's business (dropped and counted there).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import cast

from dticn.forwarder.face import Face, FaceScope, LinkType
from dticn.forwarder.forwarder import Forwarder
from dticn.packets.tlv import MAX_NDN_PACKET_SIZE

log = logging.getLogger(__name__)

MAX_FRAME = MAX_NDN_PACKET_SIZE + 256
"""Largest stream frame accepted (a packet plus NDNLPv2 headers)."""
MAX_SEND_BUFFER = 4 * 1024 * 1024
"""Bytes queued towards a slow peer before further packets to it are dropped."""


class StreamFace(Face):
    """A face on one accepted stream connection.

    Frames sent during one event-loop iteration are coalesced into a single write
    (one syscall for a burst of pipelined Data instead of one per packet).
    """

    def __init__(
        self, transport: asyncio.WriteTransport, uri: str, local_uri: str, scope: FaceScope,
        forwarder: Forwarder,
    ) -> None:
        super().__init__(uri, local_uri, scope=scope, link_type=LinkType.POINT_TO_POINT)
        self._transport = transport
        self._forwarder = forwarder
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self._queued = 0
        """The transport's write buffer when the current burst began."""

    def transmit(self, frame: bytes) -> None:
        # The transport's state is read once per burst (it cannot change before the
        # flush, which is the only writer); later frames of the burst only add up.
        if not self._pending:
            transport = self._transport
            if transport.is_closing():
                return
            self._queued = transport.get_write_buffer_size()
            if self._queued > MAX_SEND_BUFFER:
                self._forwarder.counters.drop("send_buffer_full")
                return
            try:
                asyncio.get_running_loop().call_soon(self._flush)
            except RuntimeError:  # no loop running (driven synchronously): write now
                transport.write(frame)
                return
        elif self._queued + self._pending_bytes > MAX_SEND_BUFFER:
            self._forwarder.counters.drop("send_buffer_full")
            return
        self._pending.append(frame)
        self._pending_bytes += len(frame)

    def _flush(self) -> None:
        pending, self._pending, self._pending_bytes = self._pending, [], 0
        if pending and not self._transport.is_closing():
            self._transport.write(b"".join(pending))

    def on_close(self) -> None:
        self._transport.close()


@dataclass(slots=True)
class _FramerState:
    skip: int = 0


class StreamProtocol(asyncio.Protocol):
    """Frames a byte stream into TLVs and hands them to its face."""

    def __init__(self, forwarder: Forwarder, scheme: str, *, dialed: bool = False) -> None:
        self._forwarder = forwarder
        self._scheme = scheme
        self._dialed = dialed
        self._buf = bytearray()
        self._state = _FramerState()
        self.face: StreamFace | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport = cast(asyncio.WriteTransport, transport)
        peer = transport.get_extra_info("peername")
        sock = transport.get_extra_info("sockname")
        if self._scheme == "unix":
            uri, local_uri, scope = "fd://", f"unix://{sock}", FaceScope.LOCAL
        else:
            host, port = peer[0], peer[1]
            uri = f"tcp://{_fmt_host(host)}:{port}"
            local_uri = f"tcp://{_fmt_host(sock[0])}:{sock[1]}"
            scope = FaceScope.LOCAL if _is_loopback(host) else FaceScope.NON_LOCAL
        if self._dialed:
            # a link to another forwarder, even on this host: /localhost stays inside
            scope = FaceScope.NON_LOCAL
        self.face = StreamFace(transport, uri, local_uri, scope, self._forwarder)
        self._forwarder.add_face(self.face)

    def data_received(self, data: bytes) -> None:
        """Hand every complete TLV in the buffer to the face, in one pass.

        When nothing was left over from the last read, frames are sliced straight out of
        ``data`` (one copy each); only a trailing partial frame is kept. An exception
        while processing one frame costs that frame (see :func:`_report_internal_error`).
        """
        if self._buf:
            self._buf += data
            buf: bytes | bytearray = self._buf
        else:
            buf = data
        pos = 0
        n = len(buf)
        face = self.face
        fw = self._forwarder
        state = self._state
        while pos < n:
            if state.skip:
                take = min(state.skip, n - pos)
                state.skip -= take
                pos += take
                continue
            if pos + 1 < n and buf[pos] < 0xFD and buf[pos + 1] < 0xFD:
                hlen, length = 2, buf[pos + 1]     # 1-byte TYPE and LENGTH
            else:
                header = _read_header(buf, pos)
                if header is None:
                    break
                hlen, length = header
            end = pos + hlen + length
            if hlen + length > MAX_FRAME:
                fw.counters.drop("oversized_frame")
                log.debug("face %s: skipping oversized frame of %d bytes", face, length)
                state.skip = hlen + length
                continue
            if end > n:
                break
            frame = bytes(buf[pos:end])
            pos = end
            if face is not None:
                try:
                    face.deliver(frame)
                except Exception as exc:
                    _report_internal_error(face, frame, fw, exc)
        if buf is self._buf:
            if pos:
                del self._buf[:pos]
        elif pos < n:
            self._buf += buf[pos:]

    def connection_lost(self, exc: Exception | None) -> None:
        if self.face is not None:
            self.face.close()


def _deliver_guarded(face: Face, frame: bytes, fw: Forwarder) -> None:
    """Deliver one frame; a bug in a pipeline, hook or strategy costs that packet, not
    the connection."""
    try:
        face.deliver(frame)
    except Exception as exc:
        _report_internal_error(face, frame, fw, exc)


def _report_internal_error(face: Face, frame: bytes, fw: Forwarder, exc: Exception) -> None:
    """Count the lost packet (``internal_error``) and log its traceback at most once per
    10 s per error site (``fw.internal_errors``)."""
    fw.counters.drop("internal_error")
    fw.internal_errors.report(exc, f"on face {face.face_id} ({face.uri}) while "
                                   f"processing a {len(frame)}-byte frame")


def _read_header(buf: bytes | bytearray, pos: int) -> tuple[int, int] | None:
    """Return ``(header_length, value_length)`` or None if the header is incomplete."""
    n = len(buf)
    p = pos
    for i in range(2):
        if p >= n:
            return None
        first = buf[p]
        width = 1 if first < 0xFD else {0xFD: 3, 0xFE: 5, 0xFF: 9}[first]
        if p + width > n:
            return None
        value = first if width == 1 else int.from_bytes(buf[p + 1 : p + width], "big")
        p += width
        if i == 1:
            return p - pos, value
    return None


def _is_loopback(host: str) -> bool:
    return host.startswith("127.") or host in ("::1", "::ffff:127.0.0.1")


def _fmt_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


class UdpFace(Face):
    """One remote UDP endpoint on a shared listening socket."""

    def __init__(
        self, transport: asyncio.DatagramTransport, addr: tuple[str, int], local_uri: str
    ) -> None:
        scope = FaceScope.LOCAL if _is_loopback(addr[0]) else FaceScope.NON_LOCAL
        super().__init__(f"udp://{_fmt_host(addr[0])}:{addr[1]}", local_uri, scope=scope)
        self._transport = transport
        self.addr = addr
        self.last_seen = 0.0
        self.permanent = False
        """Dialed faces (static routes) are never closed as idle (NFD: permanent)."""

    def transmit(self, frame: bytes) -> None:
        self._transport.sendto(frame, self.addr)


class UdpProtocol(asyncio.DatagramProtocol):
    """Creates a :class:`UdpFace` per remote endpoint on first datagram (bounded), and
    closes faces that stayed silent for ``idle_timeout`` seconds (NFD's on-demand
    faces do the same), so the bound is not used up by peers that went away."""

    def __init__(
        self, forwarder: Forwarder, max_faces: int = 1024, idle_timeout: float = 600.0
    ) -> None:
        self._forwarder = forwarder
        self._faces: dict[tuple[str, int], UdpFace] = {}
        self._max_faces = max_faces
        self._idle_timeout = idle_timeout
        self._transport: asyncio.DatagramTransport | None = None
        self._local_uri = "udp://"
        self._sweeper: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.DatagramTransport, transport)
        sock = transport.get_extra_info("sockname")
        self._local_uri = f"udp://{_fmt_host(sock[0])}:{sock[1]}"
        self._schedule_sweep()

    def _schedule_sweep(self) -> None:
        loop = asyncio.get_running_loop()
        self._sweeper = loop.call_later(self._idle_timeout / 4, self._sweep)

    def _sweep(self) -> None:
        now = asyncio.get_running_loop().time()
        for face in list(self._faces.values()):
            if not face.permanent and now - face.last_seen > self._idle_timeout:
                face.close()
        self._schedule_sweep()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
        for face in list(self._faces.values()):
            face.close()

    def face_for(self, addr: tuple[str, int]) -> UdpFace | None:
        """The face of remote ``addr``, created (and added to the forwarder) on first use;
        None when the face limit is reached. Dialing a peer (``open_connection``) uses
        this too, so a route can point at a face before the peer has sent anything."""
        if self._transport is None:
            return None
        key = (addr[0], addr[1])
        face = self._faces.get(key)
        if face is None:
            if len(self._faces) >= self._max_faces:
                self._forwarder.counters.drop("udp_face_limit")
                return None
            face = UdpFace(self._transport, key, self._local_uri)
            face.add_close_callback(lambda f: self._faces.pop(key, None))
            self._faces[key] = face
            self._forwarder.add_face(face)
        return face

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        face = self.face_for(addr)
        if face is None:
            return
        face.last_seen = asyncio.get_running_loop().time()
        if len(data) > MAX_FRAME:
            self._forwarder.counters.drop("oversized_frame")
            return
        _deliver_guarded(face, data, self._forwarder)
