"""DSME-GTS schedule of one coordinator and the allocators that fill it.

A GTS is a (superframe, slot, channel) cell of the multisuperframe, recurring every
multisuperframe, owned by one device in one direction. The coordinator's radio limits
what a slot may hold: it is half-duplex (one direction per slot), receives on at most
``rx_chains`` channels at once (1 for an SX1276 gateway as in the artifact, 8 for an
SX1301 concentrator) and transmits on ``tx_chains`` (1). Cells of one slot use different
channels, so GTS frames never collide with each other.

Allocators are registered by name (:data:`ALLOCATORS`); each takes the table and a list of
requests and fills the table or raises with the capacity it lacked and how to get it.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from dticn.mac.timing import DsmeTiming


class Direction(enum.StrEnum):
    UP = "up"        # device -> coordinator
    DOWN = "down"    # coordinator -> device


@dataclass(frozen=True, order=True)
class Gts:
    superframe: int
    slot: int        # GTS index 0..6 within the superframe
    channel: int
    device: int
    direction: Direction

    def offset(self, timing: DsmeTiming) -> float:
        return timing.gts_offset(self.superframe, self.slot)


def next_slot(cells: Iterable[Gts], timing: DsmeTiming, after: float) -> float | None:
    """Start of the first of ``cells`` at or after ``after`` (None: no cells).

    One function for both ends of a link, so the device's own wait and the coordinator's
    hint for it (RICE) can never disagree.
    """
    times = [timing.next_periodic(g.offset(timing), timing.multisuperframe_s, after)
             for g in cells]
    return min(times) if times else None


def cell_at(cells: Iterable[Gts], timing: DsmeTiming, when: float) -> Gts:
    """The one of ``cells`` whose slot starts at ``when`` (a time :func:`next_slot` gave)."""
    offset = when % timing.multisuperframe_s
    return min(cells, key=lambda g: abs(g.offset(timing) - offset))


class CapacityError(ValueError):
    """The schedule cannot hold the requested GTS."""


@dataclass
class GtsTable:
    """The coordinator's schedule, with its radio's per-slot limits."""

    timing: DsmeTiming
    channels: int = 16
    rx_chains: int = 1
    tx_chains: int = 1
    cells: dict[tuple[int, int, int], Gts] = field(default_factory=dict)
    by_device: dict[int, list[Gts]] = field(default_factory=dict)
    _load: dict[tuple[int, int], int] = field(default_factory=dict, repr=False)
    _direction: dict[tuple[int, int], Direction] = field(default_factory=dict, repr=False)

    def slot_direction(self, superframe: int, slot: int) -> Direction | None:
        return self._direction.get((superframe, slot))

    def slot_load(self, superframe: int, slot: int) -> int:
        return self._load.get((superframe, slot), 0)

    def slot_full(self, superframe: int, slot: int, direction: Direction) -> bool:
        """No further cell of ``direction`` fits in this slot."""
        used = self._direction.get((superframe, slot))
        if used is not None and used is not direction:
            return True
        limit = self.rx_chains if direction is Direction.UP else self.tx_chains
        return self.slot_load(superframe, slot) >= min(limit, self.channels)

    def can_hold(self, superframe: int, slot: int, channel: int, direction: Direction) -> bool:
        if (superframe, slot, channel) in self.cells:
            return False
        used = self.slot_direction(superframe, slot)
        if used is not None and used is not direction:
            return False
        limit = self.rx_chains if direction is Direction.UP else self.tx_chains
        return self.slot_load(superframe, slot) < min(limit, self.channels)

    def add(self, gts: Gts) -> Gts:
        if not self.can_hold(gts.superframe, gts.slot, gts.channel, gts.direction):
            raise CapacityError(
                f"{gts} conflicts with the schedule (cell taken, other direction in the slot, "
                f"or more than rx_chains={self.rx_chains}/tx_chains={self.tx_chains} channels)"
            )
        self.cells[(gts.superframe, gts.slot, gts.channel)] = gts
        key = (gts.superframe, gts.slot)
        self._load[key] = self._load.get(key, 0) + 1
        self._direction[key] = gts.direction
        self.by_device.setdefault(gts.device, []).append(gts)
        return gts

    def remove(self, gts: Gts) -> None:
        del self.cells[(gts.superframe, gts.slot, gts.channel)]
        key = (gts.superframe, gts.slot)
        self._load[key] -= 1
        if not self._load[key]:
            del self._load[key], self._direction[key]
        self.by_device[gts.device].remove(gts)

    def of(self, device: int, direction: Direction) -> list[Gts]:
        return sorted(g for g in self.by_device.get(device, ()) if g.direction is direction)

    def cell_during(self, channel: int, at: float) -> Gts | None:
        """The cell on ``channel`` whose slot holds the instant ``at`` (None: no such cell,
        or ``at`` lies outside the GTS part of its superframe)."""
        timing = self.timing
        index = int(at // timing.superframe_s)
        slot = (int((at - timing.superframe_start(index)) // timing.slot_s)
                - timing.first_gts_slot)
        if not 0 <= slot < timing.gts_per_superframe:
            return None
        return self.cells.get((index % timing.superframes_per_multisuperframe, slot, channel))

    def capacity(self, direction: Direction) -> int:
        """GTS cells per multisuperframe in one direction if no slot served the other."""
        limit = min(self.rx_chains if direction is Direction.UP else self.tx_chains,
                    self.channels)
        return self.timing.superframes_per_multisuperframe * self.timing.gts_per_superframe * limit

    def next_slot_time(self, device: int, direction: Direction, after: float) -> float | None:
        """Start of the device's next GTS in ``direction`` at or after ``after`` (None: none)."""
        return next_slot(self.of(device, direction), self.timing, after)

    def cells_in_order(self) -> Iterator[tuple[int, int]]:
        """(superframe, slot) pairs, spreading consecutive picks across superframes."""
        for slot in range(self.timing.gts_per_superframe):
            for superframe in range(self.timing.superframes_per_multisuperframe):
                yield superframe, slot


Request = tuple[int, Direction]
Allocator = Callable[[GtsTable, Iterable[Request]], list[Gts]]


def _no_room(table: GtsTable, device: int, direction: Direction) -> CapacityError:
    return CapacityError(
        f"no free {direction.value}link GTS for device {device}: the multisuperframe holds "
        f"{table.capacity(direction)} {direction.value}link cells with rx_chains="
        f"{table.rx_chains}, tx_chains={table.tx_chains}; raise MO (and BO) by one to double "
        "it, use a gateway with more receive chains, or drop downlink GTS"
    )


def allocate_static(table: GtsTable, requests: Iterable[Request]) -> list[Gts]:
    """The artifact's static schedule: single channel, cells handed out in a fixed order."""
    out = []
    order = list(table.cells_in_order())
    cursor = 0
    for device, direction in requests:
        while cursor < len(order):
            sf, slot = order[cursor]
            cursor += 1
            if table.can_hold(sf, slot, 0, direction):
                out.append(table.add(Gts(sf, slot, 0, device, direction)))
                break
        else:
            raise _no_room(table, device, direction)
    return out


def allocate_first_fit(table: GtsTable, requests: Iterable[Request]) -> list[Gts]:
    """Many nodes: first free (superframe, slot, channel), channels in parallel per slot.

    Each request is served by the first cell that the coordinator's radio can serve, trying
    all channels of a slot before the next slot; uplink and downlink slots never mix.
    """
    out = []
    order = list(table.cells_in_order())
    cursor = {Direction.UP: 0, Direction.DOWN: 0}
    for device, direction in requests:
        placed = None
        while cursor[direction] < len(order) and table.slot_full(*order[cursor[direction]],
                                                                 direction):
            cursor[direction] += 1
        for sf, slot in order[cursor[direction]:]:
            if table.slot_full(sf, slot, direction):
                continue
            for ch in range(table.channels):
                if table.can_hold(sf, slot, ch, direction):
                    placed = table.add(Gts(sf, slot, ch, device, direction))
                    break
            if placed is not None:
                break
        if placed is None:
            raise _no_room(table, device, direction)
        out.append(placed)
    return out


def allocate_artifact(table: GtsTable, requests: Iterable[Request]) -> list[Gts]:
    """The artifact's placement: node k's downlink GTS immediately before its uplink GTS,
    channel 0 (its experiment script, experiments/ccn_exp_template.sh lines 377-383: the
    gateway sends in superframe 0 GTS 0, the node in superframe 0 GTS 1). Node k (from 1)
    takes the pair of GTS 2j, 2j+1 of superframe (k-1) mod superframes, j = (k-1) //
    superframes, so a LoRa round trip is one slot plus the node's answer time, not a wait
    for the other direction's slot."""
    out = []
    superframes = table.timing.superframes_per_multisuperframe
    for device, direction in requests:
        pair = device - 1
        sf, j = pair % superframes, pair // superframes
        slot = 2 * j + (1 if direction is Direction.UP else 0)
        if slot >= table.timing.gts_per_superframe or not table.can_hold(sf, slot, 0,
                                                                          direction):
            raise _no_room(table, device, direction)
        out.append(table.add(Gts(sf, slot, 0, device, direction)))
    return out


ALLOCATORS: dict[str, Allocator] = {
    "static": allocate_static,
    "first-fit": allocate_first_fit,
    "artifact": allocate_artifact,
}
