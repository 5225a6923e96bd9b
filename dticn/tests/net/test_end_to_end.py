"""The forwarder as a real process between unmodified python-ndn apps (TCP and Unix)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

APPS = str(Path(__file__).with_name("ndn_apps.py"))


def _read_until(proc: subprocess.Popen[str], marker: str, timeout: float) -> list[str]:
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    assert proc.stdout is not None
    os.set_blocking(proc.stdout.fileno(), True)
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line.strip())
        if line.strip() == marker:
            return lines
    raise AssertionError(f"no {marker!r} within {timeout}s; got {lines}; rc={proc.poll()}")


def _stop(proc: subprocess.Popen[str]) -> str:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
    if proc.stdout is None or proc.stdout.closed:
        return ""
    return proc.stdout.read()


@pytest.fixture
def forwarder(tmp_path: Path) -> Iterator[dict[str, str]]:
    sock = tmp_path / "dticn.sock"
    proc = subprocess.Popen(
        [sys.executable, "-m", "dticn.cli", "forwarder", "--listen", "tcp://127.0.0.1:0",
         "--listen", f"unix://{sock}", "--log-level", "debug"],
        stdout=subprocess.PIPE, stderr=open(tmp_path / "fw.log", "w"), text=True,  # noqa: SIM115
    )
    try:
        lines = _read_until(proc, "READY", 20)
        uris = [ln.split()[1] for ln in lines if ln.startswith("listening")]
        yield {"tcp": uris[0], "unix": uris[1], "log": str(tmp_path / "fw.log")}
    finally:
        _stop(proc)


def _app(kind: str, arg: str, transport: str) -> subprocess.Popen[str]:
    env = dict(os.environ, NDN_CLIENT_TRANSPORT=transport)
    return subprocess.Popen(
        [sys.executable, APPS, kind, arg], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=env,
    )


def _consume(requests: list[tuple[str, bool]], transport: str) -> list[dict]:
    proc = _app("consumer", json.dumps(requests), transport)
    try:
        out, err = proc.communicate(timeout=30)
    finally:
        _stop(proc)
    assert proc.returncode == 0, err
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


@pytest.mark.slow
@pytest.mark.parametrize(("producer_via", "consumer_via"), [("tcp", "unix"), ("unix", "tcp")])
def test_python_ndn_apps_through_forwarder(
    forwarder: dict[str, str], producer_via: str, consumer_via: str
) -> None:
    producer = _app("producer", "/demo", forwarder[producer_via])
    try:
        _read_until(producer, "READY", 20)
        time.sleep(0.3)  # registration answer has arrived by the time READY prints
        results = _consume(
            [("/demo/a", False), ("/demo/a", False), ("/demo/b", True), ("/nothing/here", False)],
            forwarder[consumer_via],
        )
    finally:
        served = _stop(producer)
    assert results[0] == {"data": "/demo/a", "content": "hello /demo/a"}
    assert results[1] == results[0]  # second request: from the forwarder's cache
    assert results[2]["data"] == "/demo/b/v=1"
    assert results[2]["content"] == "versioned /demo/b"
    assert results[3] == {"nack": 150}
    assert served.count("served /demo/a") == 1, served
    log = Path(forwarder["log"]).read_text()
    assert "rib/register /demo -> 200" in log
    assert "in Interest /demo/a" in log and "out Data /demo/a" in log


@pytest.mark.slow
def test_hostile_bytes_do_not_kill_forwarder(forwarder: dict[str, str]) -> None:
    host, port = forwarder["tcp"].removeprefix("tcp://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.sendall(b"\x05\x03abc")  # well-framed garbage
        s.sendall(b"\x06\xfe\x00\x10\x00\x00" + b"\x00" * 1000)  # claims 1 MiB: skipped
        s.sendall(b"\x00" * (1 << 20) + b"\x64\x00")  # rest of the skipped frame + LP idle
        s.sendall(bytes.fromhex("050b07030801610a0400000001"))  # /a: no route -> Nack
        s.settimeout(5)
        reply = s.recv(4096)
    assert reply[:1] == b"\x64"  # LpPacket Nack: face stayed up and is still served
    results = _consume([("/still/alive", False)], forwarder["tcp"])
    assert results == [{"nack": 150}]


@pytest.mark.slow
def test_cli_ping_and_get_tools(forwarder: dict[str, str]) -> None:
    cli = [sys.executable, "-m", "dticn.cli"]
    server = subprocess.Popen(
        [*cli, "ping-server", "/pinger", "--transport", forwarder["unix"]],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        _read_until(server, "READY /pinger", 20)
        time.sleep(0.3)
        out = subprocess.run(
            [*cli, "ping", "/pinger", "-c", "2", "-i", "10", "--transport", forwarder["tcp"]],
            capture_output=True, text=True, timeout=30,
        )
        assert out.returncode == 0, out.stdout + out.stderr
        assert out.stdout.count("reply from /pinger") == 2
        got = subprocess.run(
            [*cli, "get", "/none", "--transport", forwarder["tcp"]],
            capture_output=True, text=True, timeout=30,
        )
        assert got.returncode == 2 and "NACK reason=150" in got.stdout
    finally:
        _stop(server)


@pytest.mark.slow
def test_two_forwarder_processes_in_a_chain(forwarder: dict[str, str], tmp_path: Path) -> None:
    """consumer -> fw1 --(tcp, static route /demo)--> fw2 -> producer."""
    sock1 = tmp_path / "fw1.sock"
    fw1 = subprocess.Popen(
        [sys.executable, "-m", "dticn.cli", "forwarder", "--listen", f"unix://{sock1}",
         "--route", f"/demo={forwarder['tcp']}"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    producer = _app("producer", "/demo", forwarder["unix"])
    try:
        _read_until(fw1, "READY", 20)
        _read_until(producer, "READY", 20)
        time.sleep(0.3)
        results = _consume([("/demo/chain", False), ("/nope", False)], f"unix://{sock1}")
    finally:
        _stop(producer)
        _stop(fw1)
    assert results == [{"data": "/demo/chain", "content": "hello /demo/chain"}, {"nack": 150}]
