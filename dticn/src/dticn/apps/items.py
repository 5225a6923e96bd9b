"""The item log: when each item's transaction started and how it ended (an observer the
applications report to; schemes never touch it)."""

from __future__ import annotations

from dataclasses import dataclass, field

from dticn.packets.name import Name


@dataclass(slots=True)
class Item:
    """One transaction: a consumer request (poll, RICE) or a produced item (push)."""

    name: Name
    started: float
    done: float | None = None
    outcome: str | None = None      # "delivered", "timeout", "nack", ...
    attempts: int = 0


@dataclass
class ItemLog:
    """``items[name]`` in start order."""

    items: dict[Name, Item] = field(default_factory=dict)

    def started(self, name: Name, t: float) -> Item:
        """Open a transaction (idempotent per name)."""
        item = self.items.get(name)
        if item is None:
            item = self.items[name] = Item(name, t)
        return item

    def finished(self, name: Name, t: float, outcome: str) -> None:
        """Close a transaction once; later outcomes (a late duplicate) are ignored."""
        item = self.items.get(name)
        if item is not None and item.outcome is None:
            item.done = t
            item.outcome = outcome
