"""Issue 14, item 7: careless input to any `dticn` command gives one clear line and a
non-zero exit, never a traceback.

Commands are discovered from the typer app, so a command added later is walked too: an
unknown flag, a word for every numeric option, and (for clients of a forwarder) a closed
port. The table below adds inputs only a command's own parser can refuse (bad files,
listener URIs, names); a few run as real processes, the rest in-process (CliRunner).
"""

from __future__ import annotations

import inspect
import socket
import subprocess
import sys
import types
import typing
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from dticn.cli import build_app

APP = build_app()
CLICK = typer.main.get_command(APP)
COMMANDS = sorted(CLICK.commands)  # type: ignore[attr-defined]
UNUSABLE_DIR = "/dev/null/dticn"  # never a directory, even for root


def _hints(command: str) -> dict[str, object]:
    [info] = [i for i in APP.registered_commands
              if (i.name or i.callback.__name__.replace("_", "-")) == command]  # type: ignore[union-attr]
    return typing.get_type_hints(inspect.unwrap(info.callback))  # type: ignore[arg-type]


def _base(annotation: object) -> object:
    """``int`` for ``int | None``, ``list[float]``, ``float | None``..."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType, list) and args:
        return _base(args[0])
    return annotation


def _required_args(command: str) -> list[str]:
    """A plausible value for each required argument (names are the only kind we have)."""
    params = CLICK.commands[command].params  # type: ignore[attr-defined]
    return ["/x" for p in params if p.param_type_name == "argument" and p.required]


def _numeric_options() -> list[tuple[str, str]]:
    out = []
    for command in COMMANDS:
        hints = _hints(command)
        for p in CLICK.commands[command].params:  # type: ignore[attr-defined]
            if p.param_type_name == "option" and _base(hints.get(p.name)) in (int, float):
                out.append((command, p.opts[0]))
    return out


def _clients() -> list[str]:
    return [c for c in COMMANDS if "transport" in _hints(c)]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _invoke(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(APP, args)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"dticn {' '.join(args)} raised {result.exception!r}")
    return result.exit_code, result.stderr


def _assert_one_line(command: str, code: int, stderr: str, *words: str) -> None:
    assert code != 0, f"dticn {command} exited 0"
    assert "Traceback" not in stderr, stderr
    lines = [ln for ln in stderr.splitlines()
             if ln.startswith(("Error:", f"dticn {command}:"))]
    assert len(lines) == 1, stderr
    for word in words:
        assert word in lines[0], lines[0]


def test_every_command_is_walked() -> None:
    expected = {"airtime", "demo", "forwarder", "gateway", "get", "ping", "put", "radio",
                "reproduce", "status", "sweep"}
    assert expected <= set(COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_unknown_flag(command: str) -> None:
    code, err = _invoke([command, *_required_args(command), "--no-such-flag"])
    _assert_one_line(command, code, err, "No such option", "--no-such-flag")


@pytest.mark.parametrize(("command", "option"), _numeric_options())
def test_word_for_a_number(command: str, option: str) -> None:
    code, err = _invoke([command, *_required_args(command), option, "abc"])
    _assert_one_line(command, code, err, option)


@pytest.mark.parametrize("command", _clients())
def test_unreachable_forwarder(command: str) -> None:
    where = f"tcp://127.0.0.1:{_closed_port()}"
    code, err = _invoke([command, *_required_args(command), "--transport", where])
    _assert_one_line(command, code, err, f"cannot reach a forwarder at {where}",
                     "Connection refused", "dticn forwarder")


BAD_TOML = "not = toml ["
CASES: list[tuple[str, list[str], list[str]]] = [
    ("radio", ["{tmp}/missing.toml"], ["missing.toml"]),
    ("radio", ["{tmp}/bad.toml"], ["line 1"]),
    ("radio", ["--traffic", "bogus", "--duration", "1s"], ["traffic 'bogus'"]),
    ("radio", ["--engine", "bogus"], ["auto, batch or events"]),
    ("radio", ["--png", f"{UNUSABLE_DIR}/x.png", "--duration", "1s"], [UNUSABLE_DIR]),
    ("airtime", ["--cr", "9/9"], ["4/5..4/8"]),
    ("sweep", ["--nodes", "a,b"], ["--nodes", "1,10,50"]),
    ("sweep", ["--configs", "bogus"], ["bogus"]),
    ("sweep", ["--json", f"{UNUSABLE_DIR}/x.json", "--duration", "1s"], [UNUSABLE_DIR]),
    ("reproduce", ["--quick", "--duration", "abc"], ["duration 'abc'"]),
    ("reproduce", ["--quick", "--loss", "abc"], ["--loss"]),
    ("reproduce", ["--quick", "--json", f"{UNUSABLE_DIR}/r.json"], [UNUSABLE_DIR]),
    ("demo", ["--out", UNUSABLE_DIR], [UNUSABLE_DIR]),
    ("status", ["--transport", "bogus://x"], ["bogus://x", "tcp://HOST:PORT"]),
    ("get", ["/x", "--transport", "bogus://x"], ["bogus://x"]),
]


@pytest.mark.parametrize(("command", "args", "words"), CASES,
                         ids=[f"{c}-{'-'.join(a)[:30]}" for c, a, _ in CASES])
def test_careless_input(tmp_path: Path, command: str, args: list[str],
                        words: list[str]) -> None:
    (tmp_path / "bad.toml").write_text(BAD_TOML)
    args = [a.format(tmp=tmp_path) for a in args]
    code, err = _invoke([command, *args])
    _assert_one_line(command, code, err, *words)


PROCESS_CASES: list[tuple[str, list[str], list[str]]] = [
    ("radio", ["--duration", "abc"], ["duration 'abc'", "e.g. 600s"]),
    ("forwarder", ["--listen", "bogus://x"], ["unsupported listener 'bogus://x'",
                                              "tcp://HOST:PORT"]),
    ("forwarder", ["--listen", "tcp://127.0.0.1:0", "--strategy", "bogus"],
     ["unknown strategy 'bogus'", "best-route"]),
    ("gateway", ["--listen", "bogus://x"], ["unsupported listener"]),
    ("get", ["/x", "--transport", "tcp://127.0.0.1:{port}"], ["cannot reach a forwarder"]),
]


@pytest.mark.parametrize(("command", "args", "words"), PROCESS_CASES,
                         ids=[f"{c}-{a[1]}" for c, a, _ in PROCESS_CASES])
def test_careless_input_in_a_real_process(command: str, args: list[str],
                                          words: list[str]) -> None:
    args = [a.format(port=_closed_port()) for a in args]
    out = subprocess.run([sys.executable, "-m", "dticn.cli", command, *args],
                         capture_output=True, text=True, timeout=60)
    _assert_one_line(command, out.returncode, out.stderr, *words)
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_debug_shows_the_traceback() -> None:
    out = subprocess.run([sys.executable, "-m", "dticn.cli", "--debug", "radio",
                          "--duration", "abc"], capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and "Traceback" in out.stderr
    assert out.stderr.strip().endswith(
        "ValueError: duration 'abc': write a number with a unit ms/s/m/h/d/w/y, e.g. 600s, "
        "10m, 1d, 365d")
