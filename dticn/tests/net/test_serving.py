"""`dticn forwarder` and `dticn gateway` start the same way (:mod:`dticn.net.serving`): a
taken address and an unreachable route each end in one line and exit 2, whichever
command the user ran, with nothing left open."""

from __future__ import annotations

import socket

import pytest
from typer.testing import CliRunner

from dticn.cli import build_app

COMMANDS = {"forwarder": [], "gateway": ["--nodes", "1"]}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_taken_port_is_one_line_and_exit_2(command: str) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = CliRunner().invoke(build_app(), [
            command, "--listen", "tcp://127.0.0.1:0", "--listen", f"tcp://127.0.0.1:{port}",
            *COMMANDS[command], "--log-level", "warning"])
    assert result.exit_code == 2, result.output
    assert f"cannot listen on tcp://127.0.0.1:{port}" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_unreachable_route_is_one_line_and_exit_2(command: str) -> None:
    with socket.socket() as probe:           # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = CliRunner().invoke(build_app(), [
        command, "--listen", "tcp://127.0.0.1:0", *COMMANDS[command],
        "--route", f"/far=tcp://127.0.0.1:{port}", "--log-level", "warning"])
    assert result.exit_code == 2, result.output
    assert f"--route /far=tcp://127.0.0.1:{port}: cannot reach the peer" in result.output
    assert "Traceback" not in result.output
