"""Issue 14 with real sockets: one local client flooding Interests that nobody answers
must not stop another client from being served.

A forwarder process listens on a unix socket. A silent app registers ``/never`` and
never answers; the attacker floods ``/never/<k>`` with the largest InterestLifetime the
packet format allows; then a consumer asks a producer for ``/good/<k>`` through the same
forwarder. With the per-face PIT quota the consumer gets every Data; with the quota off
(the behaviour before issue 14) it gets Nack Congestion, as the issue reported.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dticn.mgmt.nfd import ControlParameters
from dticn.packets import Data, Interest, LpPacket, NackReason, decode_packet, name_from_str
from dticn.packets.tlv import encode_tlv

N = name_from_str
PIT_CAPACITY = 3000
FLOOD = 3500


class Client:
    """A blocking NDN client on a unix socket: whole TLV frames in and out."""

    def __init__(self, path: str) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(10)
        self.sock.connect(path)
        self._buf = b""

    def send(self, *wires: bytes) -> None:
        self.sock.sendall(b"".join(wires))

    def recv(self) -> Interest | Data | LpPacket:
        while True:
            frame = _split_frame(self._buf)
            if frame is not None:
                wire, self._buf = frame
                return decode_packet(wire)
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("forwarder closed the connection")
            self._buf += chunk

    def register(self, prefix: str, nonce: int) -> None:
        params = encode_tlv(0x08, ControlParameters(name=N(prefix)).encode())
        self.send(Interest((*N("/localhost/nfd/rib/register"), params), nonce=nonce).encode())
        reply = self.recv()
        assert isinstance(reply, Data) and b"\x66\x01\xc8" in reply.content, reply  # 200

    def close(self) -> None:
        self.sock.close()


def _split_frame(buf: bytes) -> tuple[bytes, bytes] | None:
    pos = 0
    for _ in range(2):  # TLV-TYPE then TLV-LENGTH
        if pos >= len(buf):
            return None
        first = buf[pos]
        width = 1 if first < 0xFD else {0xFD: 3, 0xFE: 5, 0xFF: 9}[first]
        if pos + width > len(buf):
            return None
        value = first if width == 1 else int.from_bytes(buf[pos + 1:pos + width], "big")
        pos += width
    end = pos + value
    return (buf[:end], buf[end:]) if end <= len(buf) else None


def _start_forwarder(tmp_path: Path, quota: int) -> tuple[subprocess.Popen[str], str]:
    sock = tmp_path / "fw.sock"
    proc = subprocess.Popen(
        [sys.executable, "-m", "dticn.cli", "forwarder", "--listen", f"unix://{sock}",
         "--pit-capacity", str(PIT_CAPACITY), "--pit-face-quota", str(quota)],
        stdout=subprocess.PIPE, stderr=open(tmp_path / "fw.log", "w"), text=True,  # noqa: SIM115
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.strip() == "READY" or not line:
            break
    assert proc.poll() is None, (tmp_path / "fw.log").read_text()
    return proc, str(sock)


@pytest.mark.slow
@pytest.mark.parametrize("quota", [1000, 0], ids=["quota", "no-quota"])
def test_flooding_client_does_not_starve_another(tmp_path: Path, quota: int) -> None:
    proc, path = _start_forwarder(tmp_path, quota)
    clients: list[Client] = []
    try:
        silent, attacker, producer, consumer = (Client(path) for _ in range(4))
        clients += [silent, attacker, producer, consumer]
        silent.register("/never", 1)
        producer.register("/good", 2)
        attacker.send(*(
            Interest(N(f"/never/{k}"), nonce=100 + k, lifetime_ms=(1 << 64) - 1).encode()
            for k in range(FLOOD)
        ))
        admitted = min(quota or PIT_CAPACITY, PIT_CAPACITY)
        for _ in range(FLOOD - admitted):  # every refused Interest is Nacked: flood done
            nack = attacker.recv()
            assert isinstance(nack, LpPacket) and nack.nack_reason == NackReason.CONGESTION
        served = nacked = 0
        started = time.perf_counter()
        for k in range(30):
            consumer.send(Interest(N(f"/good/{k}"), nonce=10_000 + k).encode())
            if quota:
                interest = producer.recv()
                assert isinstance(interest, Interest)
                producer.send(Data(interest.name, b"ok").encode())
            reply = consumer.recv()
            served += isinstance(reply, Data)
            nacked += isinstance(reply, LpPacket)
        elapsed = time.perf_counter() - started
    finally:
        for c in clients:
            c.close()
        proc.terminate()
        proc.wait(timeout=10)
    if quota:
        assert served == 30, (served, nacked)
        assert elapsed < 5, elapsed
    else:
        assert nacked == 30  # the starvation issue 14 reported
