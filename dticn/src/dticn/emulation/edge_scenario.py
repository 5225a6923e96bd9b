"""What one emulated edge is, as data: the scheme, the nodes and their names, the seed.

By default node ``k`` (from 1) owns ``/node<k>`` and its ``i``-th item is ``/node<k>/<i>``.
A scenario file (TOML) may name the nodes instead and fix when push nodes produce::

    scheme = "push"
    seed = 7
    nodes = 2                       # optional when [[node]] tables are given
    interval_s = [50, 70]           # gap between pushed items (per node, seeded)
    first_item_s = 60               # earliest production time (virtual seconds)

    [[node]]
    prefix = "/garden"
    push_at = [60.0, 125.0]         # optional: exact production times

    [[node]]
    prefix = "/cellar"

Prefixes are one name component, because the node registers ``/reg/<prefix>`` and the
gateway schemes install the route for that one component.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from dticn.edge_profiles import get_profile
from dticn.lora_edge import item_times
from dticn.packets.name import Name, name_from_str, name_to_str
from dticn.packets.tlv import encode_tlv
from dticn.schemes import get as get_config


@dataclass(frozen=True)
class EdgeScenario:
    """One gateway, its LoRa nodes and their production (virtual seconds throughout).

    Args:
        scheme: configuration name from :func:`dticn.schemes.registry`.
        nodes: number of LoRa nodes.
        seed: radio, nonces and push times derive from it (as in the simulator).
        prefixes: one per node (default ``/node<k>``).
        push_at: per node, production times of pushed items (push schemes); empty tuple
            for a node: drawn from ``interval_s`` like the experiment's traffic.
        interval_s: (low, high) gap between a node's pushed items, U(low, high).
        first_item_s: the push schedule starts here (after the nodes registered).
        items: pushed items per node when times are drawn.
    """

    scheme: str = "rice"
    nodes: int = 3
    seed: int = 1
    prefixes: tuple[str, ...] = ()
    push_at: tuple[tuple[float, ...], ...] = ()
    interval_s: tuple[float, float] = (50.0, 70.0)
    first_item_s: float = 60.0
    items: int = 1000
    profile: str = "model"

    def __post_init__(self) -> None:
        get_config(self.scheme)              # raises with the list of known names
        get_profile(self.profile)            # the same
        if self.nodes < 1:
            raise ValueError(f"nodes={self.nodes}: give at least one LoRa node (--nodes 1)")
        if self.prefixes and len(self.prefixes) != self.nodes:
            raise ValueError(f"{len(self.prefixes)} prefixes for {self.nodes} nodes: give one "
                             "prefix per node")
        for p in self.prefixes:
            if len(name_from_str(p)) != 1:
                raise ValueError(f"prefix {p!r}: use one name component (e.g. /garden); the "
                                 "node registers /reg/<prefix> and the gateway routes that")
        if len(set(self.node_prefixes())) != self.nodes:
            raise ValueError(f"prefixes {self.prefixes}: every node needs its own prefix")
        if self.push_at and len(self.push_at) != self.nodes:
            raise ValueError("push_at: give one list of times per node (may be empty)")

    def node_prefixes(self) -> list[str]:
        """The prefix of node 1..n."""
        return list(self.prefixes) or [f"/node{k}" for k in range(1, self.nodes + 1)]

    def prefix(self, node: int) -> Name:
        """Node ``node``'s prefix as a name."""
        return name_from_str(self.node_prefixes()[node - 1])

    def item_name(self, node: int, index: int) -> Name:
        """``<prefix>/<index>``."""
        return (*self.prefix(node), encode_tlv(0x08, str(index).encode()))

    def item_uri(self, node: int, index: int) -> str:
        """``/node<k>/<i>`` as text."""
        return name_to_str(self.item_name(node, index))

    def push_schedule(self, node: int) -> list[float]:
        """Production times of ``node``'s items: given, else the experiment's traffic draw."""
        if self.push_at and self.push_at[node - 1]:
            return sorted(float(t) for t in self.push_at[node - 1])
        mean = sum(self.interval_s) / 2
        times = item_times(seed=self.seed, node=node, interval_s=self.interval_s,
                           pattern="uniform", start=self.first_item_s,
                           duration_s=mean + self.interval_s[1] * self.items)
        return [float(t) for t in times][: self.items]

    def with_(self, **changes: Any) -> EdgeScenario:
        return replace(self, **changes)

    @classmethod
    def from_file(cls, path: str | Path, **overrides: Any) -> EdgeScenario:
        """Read a TOML scenario (see module docstring); ``overrides`` win over the file."""
        p = Path(path)
        try:
            data = tomllib.loads(p.read_text())
        except FileNotFoundError:
            raise FileNotFoundError(f"scenario file {p} not found; give an existing TOML "
                                    "file or leave --scenario out") from None
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"scenario file {p}: not valid TOML ({exc})") from exc
        nodes = data.pop("node", [])
        known = {"scheme", "seed", "nodes", "interval_s", "first_item_s", "items", "profile"}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"scenario file {p}: unknown keys {sorted(unknown)}; known: "
                             f"{sorted(known | {'node'})}")
        kwargs: dict[str, Any] = dict(data)
        if "interval_s" in kwargs:
            kwargs["interval_s"] = tuple(float(x) for x in kwargs["interval_s"])
        if nodes:
            kwargs.setdefault("nodes", len(nodes))
            kwargs["prefixes"] = tuple(n["prefix"] for n in nodes)
            kwargs["push_at"] = tuple(tuple(float(t) for t in n.get("push_at", ()))
                                      for n in nodes)
        kwargs.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**kwargs)
