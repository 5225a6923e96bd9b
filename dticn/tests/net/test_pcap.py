"""Issue 14, item 5 (forwarder part): ``dticn forwarder --pcap FILE`` traces every face."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dticn.net.pcap import FORWARDER_IP, face_ip, read_pcap
from dticn.packets import Data, Interest, LpPacket, NackReason, decode_packet, name_from_str

from .test_flood import Client

N = name_from_str


def _traced_exchange(tmp_path: Path) -> Path:
    """A forwarder process with --pcap: a registration, one exchange, one Nack."""
    sock, trace = tmp_path / "fw.sock", tmp_path / "fw.pcap"
    proc = subprocess.Popen(
        [sys.executable, "-m", "dticn.cli", "forwarder", "--listen", f"unix://{sock}",
         "--pcap", str(trace)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stdout is not None
        while proc.stdout.readline().strip() not in ("READY", ""):
            pass
        producer, consumer = Client(str(sock)), Client(str(sock))
        producer.register("/trace", 1)
        consumer.send(Interest(N("/trace/a"), nonce=2).encode())
        interest = producer.recv()
        assert isinstance(interest, Interest)
        producer.send(Data(interest.name, b"traced").encode())
        assert isinstance(consumer.recv(), Data)
        consumer.send(Interest(N("/nobody/home"), nonce=3).encode())
        assert isinstance(consumer.recv(), LpPacket)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    return trace


@pytest.mark.slow
def test_forwarder_pcap_holds_every_frame_of_every_face(tmp_path: Path) -> None:
    records = read_pcap(str(_traced_exchange(tmp_path)))
    packets = [(src, dst, decode_packet(frame)) for _t, src, dst, frame in records]
    # producer: registration Interest in, its reply out, Interest out, Data in;
    # management (internal face 1): the command out, its reply in;
    # consumer: Interest in, Data out, Interest in, Nack out
    assert len(packets) == 10, packets
    assert sum(face_ip(1) in (src, dst) for src, dst, _p in packets) == 2
    consumer_ip = next(dst for src, dst, p in packets
                       if src == FORWARDER_IP and isinstance(p, Data) and p.content == b"traced")
    seen = [(src == consumer_ip, type(p).__name__) for src, dst, p in packets
            if consumer_ip in (src, dst)]
    assert seen == [(True, "Interest"), (False, "Data"), (True, "Interest"),
                    (False, "LpPacket")]
    nack = packets[-1][2]
    assert isinstance(nack, LpPacket) and nack.nack_reason == NackReason.NO_ROUTE
    assert face_ip(256) == bytes((10, 0, 1, 0))


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tshark") is None,
                    reason="tshark not installed (apt-get install tshark)")
def test_tshark_reads_the_trace(tmp_path: Path) -> None:
    """Stock tshark has no NDN dissector: it must read every frame as UDP 6363. With
    NDN's Lua dissector (ndn-tools' ndn.lua) where one is installed, Interests and Data
    show as NDN (it does not dissect NDNLPv2, so the Nack stays plain UDP)."""
    trace = _traced_exchange(tmp_path)
    out = subprocess.run(["tshark", "-r", str(trace)], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 10 and all("6363 → 6363" in ln for ln in lines), out.stdout
    lua = next((p for p in NDN_LUA_PATHS if Path(p).exists()), None)
    if lua is None:
        return
    out = subprocess.run(["tshark", "-X", f"lua_script:{lua}", "-r", str(trace)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert sum("NDN" in ln for ln in out.stdout.splitlines()) >= 8, out.stdout


NDN_LUA_PATHS = (
    "/usr/local/share/ndn-dissect-wireshark/ndn.lua",
    "/usr/share/ndn-dissect-wireshark/ndn.lua",
)
"""Where ndn-tools installs its Wireshark dissector (its README)."""
