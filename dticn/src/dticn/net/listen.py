"""Listener URIs (``tcp://127.0.0.1:6363``, ``unix:///tmp/dticn.sock``,
``udp://127.0.0.1:6363``) and opening them on the running loop.

A unix listener behaves as NFD's (``UnixStreamChannel::listen`` in NFD's
daemon/face/unix-stream-channel.cpp): a socket file another process answers on is left
alone and the start fails (:class:`ListenerInUse`); a stale one (connection refused) is
removed; a path that is not a socket is refused. The socket is made world-writable
(mode 0666, NFD's choice: every local user's apps may connect, as with NFD's default
``unix`` face); ``--unix-mode 0660`` limits it to the owner's group. The listen backlog
is 4096 (NFD asks for the system maximum; Linux caps it at ``net.core.somaxconn``,
4096 since 5.4) so a burst of connections while the loop is busy waits in the kernel
instead of failing with EAGAIN.
"""

from __future__ import annotations

import asyncio
import os
import socket
import stat
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlparse

from dticn.forwarder.face import Face, FaceScope
from dticn.forwarder.forwarder import Forwarder
from dticn.net.stream import StreamProtocol, UdpProtocol

DEFAULT_BACKLOG = 4096
DEFAULT_UNIX_MODE = 0o666


class ListenerError(OSError):
    """A listener could not be opened; the message says why and what to do."""


class ListenerInUse(ListenerError):
    """Another process answers on the unix socket path."""


@dataclass(frozen=True, slots=True)
class ListenUri:
    """A parsed listener address."""

    scheme: str
    host: str = ""
    port: int = 0
    path: str = ""

    def __str__(self) -> str:
        return (f"unix://{self.path}" if self.scheme == "unix"
                else f"{self.scheme}://{self.host}:{self.port}")

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
    forwarder: Forwarder, uri: ListenUri, *, backlog: int = DEFAULT_BACKLOG,
    unix_mode: int = DEFAULT_UNIX_MODE,
) -> tuple[str, Callable[[], None]]:
    """Start listening; return the bound URI (real port when 0 was asked) and a closer.

    Raises :class:`ListenerInUse` when another process answers on a unix path and
    :class:`ListenerError` when the path is not a socket.
    """
    loop = asyncio.get_running_loop()
    if uri.scheme == "unix":
        _claim_unix_path(uri.path)
        server = await loop.create_unix_server(
            lambda: StreamProtocol(forwarder, "unix"), uri.path, backlog=backlog
        )
        os.chmod(uri.path, unix_mode)

        def close_unix() -> None:
            server.close()
            if _is_socket(uri.path):
                os.unlink(uri.path)

        return f"unix://{uri.path}", close_unix
    if uri.scheme == "tcp":
        server = await loop.create_server(
            lambda: StreamProtocol(forwarder, "tcp"), uri.host, uri.port, backlog=backlog
        )
        sock = server.sockets[0].getsockname()
        return f"tcp://{uri.host}:{sock[1]}", server.close
    transport, _ = await loop.create_datagram_endpoint(
        lambda: UdpProtocol(forwarder), local_addr=(uri.host, uri.port)
    )
    sock = transport.get_extra_info("sockname")
    return f"udp://{uri.host}:{sock[1]}", transport.close


def _claim_unix_path(path: str) -> None:
    """Make ``path`` free for a new listener, or raise if it is not ours to take."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(mode):
        raise ListenerError(
            f"{path} exists and is not a socket; remove it or listen on another path"
        )
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(path)
    except (ConnectionRefusedError, FileNotFoundError):
        os.unlink(path)  # stale: nobody listens any more
        return
    except OSError:
        pass  # someone listens but is busy (backlog full, timeout): still theirs
    finally:
        probe.close()
    raise ListenerInUse(
        f"another forwarder is listening on unix://{path}; stop it first or listen on "
        "another path"
    )


def _is_socket(path: str) -> bool:
    try:
        return stat.S_ISSOCK(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False


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
