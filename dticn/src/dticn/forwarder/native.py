"""What the forwarder's classes tell mypyc, importable by the pure build too.

The compiled build (docs/dticn-core.md "Performance") turns the forwarder's classes into
native ones; a class that scenarios and tests subclass in plain Python (faces, hooks)
says so with ``@mypyc_attr(allow_interpreted_subclasses=True)``. mypyc reads that
decorator from ``mypy_extensions``; the pure build does not need that package, so here it
falls back to a decorator that changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

try:
    from mypy_extensions import mypyc_attr
except ImportError:  # the pure build: only mypyc reads the decorator
    def mypyc_attr(*attrs: str, **kwattrs: object) -> Callable[[T], T]:  # type: ignore[no-redef]
        """Stand-in for mypy_extensions.mypyc_attr: returns the class unchanged."""
        return lambda cls: cls

__all__ = ["mypyc_attr"]
