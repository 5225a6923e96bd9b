"""The `dticn` command line.

Subcommands live one per module in `dticn.commands`; each module defines
`register(app: typer.Typer) -> None`. Discovering them here keeps this file free of
edits as commands are added, and heavy imports (torch, numpy) stay inside each command
so that `dticn --help` answers at once.

Errors: every command runs inside :func:`guard`, so a bad flag value, an unreadable file
or an unreachable forwarder ends in one line on stderr naming what failed and the fix,
with a non-zero exit (1; usage errors found by click exit 2), never a traceback. Known
errors are the ones our parsers and the OS raise for bad input (:class:`ValueError`,
:class:`OSError`, :class:`LookupError`); anything else is a bug and keeps its traceback.
``dticn --debug`` (or ``DTICN_DEBUG=1``) shows the traceback of known errors too.
"""

from __future__ import annotations

import functools
import importlib
import os
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import typer

from dticn import __version__
from dticn import commands as _commands


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"dticn {__version__}")
        raise typer.Exit()


KNOWN_ERRORS: tuple[type[BaseException], ...] = (ValueError, OSError, LookupError)
"""Exceptions that mean bad input or an unreachable peer, not a bug in dticn."""
DEFAULT_TRANSPORT = "tcp://127.0.0.1:6363"
"""Where python-ndn (and so dticn's client commands) looks without --transport."""


@dataclass(slots=True)
class Session:
    """What the root options decide for every command of one run (``--debug``)."""

    debug: bool = False


def describe(exc: BaseException, params: dict[str, Any]) -> str:
    """One line for ``exc``: what failed and, where we know it, the fix. ``params`` are
    the command's arguments (a ``transport`` one marks a client of a forwarder)."""
    transport = params.get("transport") if "transport" in params else None
    if isinstance(exc, OSError):
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        if exc.filename is not None:
            return f"{exc.filename}: {reason}"
        if transport is not None:
            where = transport or os.environ.get("NDN_CLIENT_TRANSPORT") or DEFAULT_TRANSPORT
            return (f"cannot reach a forwarder at {where} ({reason}); start one with 'dticn "
                    "forwarder' or pass --transport (or set NDN_CLIENT_TRANSPORT)")
        if isinstance(exc, ConnectionError):
            return f"{exc} ({reason}); is the peer running and the address right?"
        return str(exc) if str(exc) else reason
    if isinstance(exc, KeyError) and exc.args:
        key = exc.args[0]  # str(KeyError) quotes its argument: unwrap messages
        return key if isinstance(key, str) and " " in key else f"unknown name {key!r}"
    text = str(exc) or type(exc).__name__
    if transport and transport in text:
        text += "; give --transport as tcp://HOST:PORT or unix:///PATH"
    return text


def guard(command: str, callback: Callable[..., Any], session: Session) -> Callable[..., Any]:
    """``callback`` with known errors printed as one line ``dticn COMMAND: message``
    (exit 1); with ``session.debug`` they propagate with their traceback."""

    @functools.wraps(callback)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        try:
            return callback(*args, **kwargs)
        except KNOWN_ERRORS as exc:
            if session.debug:
                raise
            typer.echo(f"dticn {command}: {describe(exc, kwargs)}", err=True)
            raise typer.Exit(1) from None

    return guarded


def build_app() -> typer.Typer:
    """Create the typer application with every subcommand found in `dticn.commands`."""
    session = Session()
    app = typer.Typer(
        name="dticn",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,  # plain click errors: the message on one line, never boxed
    )

    @app.callback()
    def _root(
        version: bool = typer.Option(
            False, "--version", callback=_version_callback, is_eager=True,
            help="Print the version and exit.",
        ),
        debug: bool = typer.Option(
            False, "--debug", envvar="DTICN_DEBUG",
            help="Show tracebacks of errors that are otherwise one line (bad input, "
            "unreachable forwarder).",
        ),
    ) -> None:
        """DT-ICN: delay-tolerant NDN over DSME/LoRa."""
        session.debug = debug

    for info in sorted(pkgutil.iter_modules(_commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{_commands.__name__}.{info.name}")
        module.register(app)
    for info in app.registered_commands:
        if info.callback is not None:
            name = info.name or info.callback.__name__.replace("_", "-")
            info.callback = guard(name, info.callback, session)
    return app


def main() -> None:
    """Entry point of the console script."""
    build_app()()


if __name__ == "__main__":
    main()
