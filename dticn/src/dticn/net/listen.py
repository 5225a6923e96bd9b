"""Listener URIs (``tcp://127.0.0.1:6363``, ``unix:///tmp/dticn.sock``,
``udp://127.0.0.1:6363``) and opening them on the running loop."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlparse

from dticn.forwarder.face import Face, FaceScope
from dticn.forwarder.forwarder import Forwarder
from dticn.net.stream import StreamProtocol, UdpProtocol


@dataclass(frozen=True, slots=True)
class ListenUri:
    """A parsed listener address."""

    scheme: str
    host: str = ""
    port: int = 0
    path: str = ""

    @classmethod
    def parse(cls, uri: str) -> ListenUri:
        """Parse; raise ValueError naming the accepted forms."""
        u = urlparse(uri)
        if u.scheme == "unix":
            if not u.path:
                raise ValueError(f"{uri!r}: unix listener needs a path, e.g. unix:///tmp/x.sock")
            return cls("unix", path=u.path)
        if u.scheme in ("tcp", "tcp4", "tcp6", "udp", "udp4", "udp6"):
            if u.hostname is None:
                raise ValueError(f"{uri!r}: needs a host, e.g. tcp://127.0.0.1:6363")
            return cls(u.scheme[:3], host=u.hostname, port=u.port if u.port is not None else 6363)
        raise ValueError(
            f"unsupported listener {uri!r}; use tcp://HOST:PORT, udp://HOST:PORT or "
            "unix:///PATH"
        )


async def open_listener(
    forwarder: Forwarder, uri: ListenUri
) -> tuple[str, Callable[[], None]]:
    """Start listening; return the bound URI (real port when 0 was asked) and a closer."""
    loop = asyncio.get_running_loop()
    if uri.scheme == "unix":
        if os.path.exists(uri.path):
            os.unlink(uri.path)
        server = await loop.create_unix_server(
            lambda: StreamProtocol(forwarder, "unix"), uri.path
        )
        return f"unix://{uri.path}", server.close
    if uri.scheme == "tcp":
        server = await loop.create_server(
            lambda: StreamProtocol(forwarder, "tcp"), uri.host, uri.port
        )
        sock = server.sockets[0].getsockname()
        return f"tcp://{uri.host}:{sock[1]}", server.close
    transport, _ = await loop.create_datagram_endpoint(
        lambda: UdpProtocol(forwarder), local_addr=(uri.host, uri.port)
    )
    sock = transport.get_extra_info("sockname")
    return f"udp://{uri.host}:{sock[1]}", transport.close


async def open_connection(forwarder: Forwarder, uri: ListenUri) -> Face:
    """Dial a remote forwarder (tcp, unix or udp) and return the new face (already added)."""
    loop = asyncio.get_running_loop()
    if uri.scheme == "unix":
        _, proto = await loop.create_unix_connection(
            lambda: StreamProtocol(forwarder, "unix", dialed=True), uri.path
        )
    elif uri.scheme == "tcp":
        _, proto = await loop.create_connection(
            lambda: StreamProtocol(forwarder, "tcp", dialed=True), uri.host, uri.port
        )
    elif uri.scheme == "udp":
        transport, udp = await loop.create_datagram_endpoint(
            lambda: UdpProtocol(forwarder), remote_addr=(uri.host, uri.port))
        peer = transport.get_extra_info("peername")
        face = udp.face_for((peer[0], peer[1]))
        if face is None:
            transport.close()
            raise ConnectionError(f"udp://{uri.host}:{uri.port}: UDP face limit reached")
        face.scope = FaceScope.NON_LOCAL     # a link to another forwarder, as for tcp
        face.permanent = True
        return face
    else:
        raise ValueError(f"cannot dial {uri.scheme}:// (tcp://, udp:// or unix://)")
    assert proto.face is not None
    return proto.face
