"""An Internet link between two forwarders: fixed one-way delay, optional seeded loss.

Each end is a :class:`LinkEnd` face; a frame sent on one end is counted with the kind the
forwarder gave it and delivered to the other after ``delay_s`` of virtual time unless the
link's own ``random.Random`` drops it (Bernoulli loss, independent per frame and direction).
Delivery is always scheduled, never synchronous, so forwarder pipelines never re-enter
themselves.
"""

from __future__ import annotations

import random

from dticn.forwarder.face import Face, PacketKind
from dticn.forwarder.forwarder import Forwarder
from dticn.links.observer import PacketCounter
from dticn.packets import Data, Interest
from dticn.sim.kernel import EventKernel


class LinkEnd(Face):
    """One end of an :class:`InternetLink`: what it transmits crosses to the other end."""

    def __init__(self, link: InternetLink, direction: str, uri: str) -> None:
        super().__init__(uri)
        self.link = link
        self.direction = direction
        self.other: LinkEnd | None = None

    def transmit(self, frame: bytes) -> None:
        self.transmit_typed(frame, None, None)

    def transmit_typed(self, frame: bytes, kind: PacketKind | None,
                       packet: Interest | Data | None) -> None:
        assert self.other is not None
        self.link.carry(frame, kind, self.other, self.direction)


class InternetLink:
    """Two faces joined by a delay line (end ``a`` and end ``b``).

    Args:
        kernel: the shared virtual clock.
        name: link label for the packet counter (e.g. ``"consumer-forwarder"``).
        delay_s: one-way delay (the artifact's 20 ms).
        loss: probability that a frame is lost (0.05 in the artifact's lossy runs).
        rng: the link's own generator (seeded by the experiment), so loss is reproducible.
        counter: where every frame sent is counted; ``a -> b`` is direction ``a_to_b``.
        directions: labels of (a -> b, b -> a), e.g. ``("up", "down")``.
    """

    def __init__(self, kernel: EventKernel, name: str, *, delay_s: float = 0.020,
                 loss: float = 0.0, rng: random.Random, counter: PacketCounter,
                 directions: tuple[str, str] = ("a_to_b", "b_to_a")) -> None:
        if delay_s < 0:
            raise ValueError(f"delay_s={delay_s}: a link delay must be >= 0")
        if not 0.0 <= loss < 1.0:
            raise ValueError(f"loss={loss}: give a probability in [0, 1)")
        self.kernel = kernel
        self.name = name
        self.delay_s = delay_s
        self.loss = loss
        self.rng = rng
        self.counter = counter
        self.lost = 0
        self.a = LinkEnd(self, directions[0], f"sim://{name}/a")
        self.b = LinkEnd(self, directions[1], f"sim://{name}/b")
        self.a.other, self.b.other = self.b, self.a

    def carry(self, frame: bytes, kind: PacketKind | None, to: Face, direction: str) -> None:
        """Count ``frame`` (``kind`` None: decoded to learn it), then lose it or deliver
        it to ``to`` after the link's delay."""
        self.counter.count(self.name, direction, frame, kind)
        if self.loss and self.rng.random() < self.loss:
            self.lost += 1
            return
        self.kernel.call_later(self.delay_s, to.deliver, frame)

    def connect(self, a: Forwarder, b: Forwarder) -> tuple[int, int]:
        """Add the two ends to forwarders ``a`` and ``b``; return their face ids."""
        return a.add_face(self.a), b.add_face(self.b)
