"""Issue 14, item 3: the unix socket as NFD's ``unix`` channel does it: world-writable
by default, a live socket is never taken over, a stale one is replaced, and a burst of
connections while the forwarder is busy waits in the listen backlog."""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from dticn.packets import Interest, LpPacket, NackReason, name_from_str

from .test_flood import Client


def _forwarder(sock: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "dticn.cli", "forwarder", "--listen", f"unix://{sock}", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def _ready(proc: subprocess.Popen[str]) -> None:
    assert proc.stdout is not None
    while (line := proc.stdout.readline().strip()) != "READY":
        assert line, proc.stderr.read() if proc.stderr else proc.returncode


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.terminate()
        proc.wait(timeout=10)


def _still_serves(path: str) -> None:
    client = Client(path)
    client.send(Interest(name_from_str("/nobody/home"), nonce=1).encode())
    reply = client.recv()
    client.close()
    assert isinstance(reply, LpPacket) and reply.nack_reason == NackReason.NO_ROUTE


@pytest.mark.slow
def test_mode_and_a_second_forwarder_is_refused(tmp_path: Path) -> None:
    sock = tmp_path / "fw.sock"
    first = _forwarder(sock)
    try:
        _ready(first)
        assert stat.S_IMODE(os.stat(sock).st_mode) == 0o666
        second = _forwarder(sock)
        _, err = second.communicate(timeout=30)
        assert second.returncode == 2, err
        assert "another forwarder is listening" in err and "Traceback" not in err
        _still_serves(str(sock))  # the first one kept its socket
    finally:
        _stop(first)
    assert not sock.exists()  # a clean exit removes the socket file


@pytest.mark.slow
def test_stale_socket_is_replaced_and_mode_is_configurable(tmp_path: Path) -> None:
    sock = tmp_path / "fw.sock"
    crashed = _forwarder(sock)
    _ready(crashed)
    crashed.kill()  # leaves the socket file behind
    crashed.wait(timeout=10)
    assert sock.exists()
    again = _forwarder(sock, "--unix-mode", "0660")
    try:
        _ready(again)
        assert stat.S_IMODE(os.stat(sock).st_mode) == 0o660
        _still_serves(str(sock))
    finally:
        _stop(again)
    not_a_socket = tmp_path / "plain"
    not_a_socket.write_text("keep me")
    refused = _forwarder(not_a_socket)
    _, err = refused.communicate(timeout=30)
    assert refused.returncode == 2 and "is not a socket" in err
    assert not_a_socket.read_text() == "keep me"


@pytest.mark.slow
def test_connection_burst_while_busy_waits_in_the_backlog(tmp_path: Path) -> None:
    """300 clients connect while the forwarder cannot accept (stopped, as a loop busy
    for a second would be); with the old backlog of 100 about 200 failed with EAGAIN."""
    sock = tmp_path / "fw.sock"
    proc = _forwarder(sock)
    clients: list[socket.socket] = []
    try:
        _ready(proc)
        os.kill(proc.pid, signal.SIGSTOP)
        failed = 0
        for _ in range(300):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.setblocking(False)
            try:
                s.connect(str(sock))
                clients.append(s)
            except BlockingIOError:
                failed += 1
                s.close()
        os.kill(proc.pid, signal.SIGCONT)
        assert failed == 0
        _still_serves(str(sock))
    finally:
        os.kill(proc.pid, signal.SIGCONT)
        for s in clients:
            s.close()
        _stop(proc)
