"""Name-to-factory registries (models, communication methods), instead of if/elif chains."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class Registry(Generic[T]):
    """Maps a user-facing name to a factory; unknown names fail with the list of choices."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator that registers ``factory`` under ``name`` (names are unique)."""

        def decorator(factory: T) -> T:
            if name in self._entries:
                raise ValueError(f"{self.kind} {name!r} is already registered")
            self._entries[name] = factory
            return factory

        return decorator

    def get(self, name: str) -> T:
        """Return the factory for ``name`` or raise ``KeyError`` naming the valid choices."""
        try:
            return self._entries[name]
        except KeyError:
            choices = ", ".join(sorted(self._entries)) or "(none registered)"
            raise KeyError(f"unknown {self.kind} {name!r}; choose one of: {choices}") from None

    def names(self) -> list[str]:
        """Registered names, sorted."""
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())
