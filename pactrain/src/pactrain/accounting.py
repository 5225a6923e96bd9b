"""Bytes a communication hook puts into collectives.

Every hook (PacTrain's and the baselines') counts the payload it hands to collectives,
per rank and before the ring all-reduce factor 2(N-1)/N, so benchmarks can compare each
method with the ideal (density x dense payload) and with bytes read off the wire. The
counting is done by the hook's :class:`pactrain.compression.communicator.Communicator`,
which owns one counter.
A step ends at the bucket for which ``GradBucket.is_last()`` is true.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class PayloadCounter:
    """Cumulative payload bytes and completed steps of one hook on one rank."""

    total_bytes: int = 0
    steps: int = 0
    by_collective: dict[str, int] = field(default_factory=dict)

    def add(self, nbytes: int, collective: str = "all_reduce") -> None:
        """Record ``nbytes`` handed to one collective call."""
        if nbytes < 0:
            raise ValueError(f"payload bytes must be >= 0, got {nbytes}")
        self.total_bytes += int(nbytes)
        self.by_collective[collective] = self.by_collective.get(collective, 0) + int(nbytes)

    def end_step(self) -> None:
        """Mark the end of one optimizer step (call on the last bucket)."""
        self.steps += 1

    def bytes_per_step(self) -> float:
        """Average payload per completed step (0.0 before the first step)."""
        return self.total_bytes / self.steps if self.steps else 0.0

    def reset(self) -> None:
        """Forget everything counted so far (e.g. after warm-up steps)."""
        self.total_bytes = 0
        self.steps = 0
        self.by_collective.clear()
