"""An Internet link between two forwarders: fixed one-way delay, optional seeded loss.

Each end is a :class:`~dticn.forwarder.face.CallbackFace`; a frame sent on one end is
delivered to the other after ``delay_s`` of virtual time unless the link's own
``random.Random`` drops it (Bernoulli loss, independent per frame and direction). Delivery
is always scheduled, never synchronous, so forwarder pipelines never re-enter themselves.
"""

from __future__ import annotations

import random

from dticn.forwarder.face import CallbackFace
from dticn.forwarder.forwarder import Forwarder
from dticn.links.observer import PacketCounter
from dticn.sim.kernel import EventKernel


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
        self.a = CallbackFace(lambda f: self._carry(f, self.b, directions[0]),
                              uri=f"sim://{name}/a")
        self.b = CallbackFace(lambda f: self._carry(f, self.a, directions[1]),
                              uri=f"sim://{name}/b")

    def _carry(self, frame: bytes, to: CallbackFace, direction: str) -> None:
        self.counter.count(self.name, direction, frame)
        if self.loss and self.rng.random() < self.loss:
            self.lost += 1
            return
        self.kernel.call_later(self.delay_s, to.deliver, frame)

    def connect(self, a: Forwarder, b: Forwarder) -> tuple[int, int]:
        """Add the two ends to forwarders ``a`` and ``b``; return their face ids."""
        return a.add_face(self.a), b.add_face(self.b)
