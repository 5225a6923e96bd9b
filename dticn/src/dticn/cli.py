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
    """One line for ``exc``: what failed and, where we know it, the fix."""
    if isinstance(exc, OSError) and "transport" in params and exc.filename is None:
        where = params["transport"] or os.environ.get("NDN_CLIENT_TRANSPORT") or \
            DEFAULT_TRANSPORT
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        return (f"cannot reach a forwarder at {where} ({reason}); start one with 'dticn "
                "forwarder' or pass --transport (or set NDN_CLIENT_TRANSPORT)")
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"{exc.filename}: {exc.strerror or exc}"
    if isinstance(exc, KeyError):  # str(KeyError) is the bare key in quotes
        return f"unknown name {exc.args[0]!r}" if exc.args else "unknown name"
    text = str(exc) or type(exc).__name__
    return text if isinstance(exc, ValueError) else f"{text} ({type(exc).__name__})"


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
