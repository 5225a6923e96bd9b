"""A rank's heartbeat file, written off the training step by a background thread.

The launcher reads ``<progress_path>.rank<r>`` (completed steps, then ``reducing`` once the
rank's backward pass has produced its last gradient) to draw its progress bar and, when a
collective times out, to name the rank the others waited for
(:func:`pactrain.train.launch.stalled_ranks`).

Why a thread: writing and renaming the file twice a step cost 2-3% of a fashion-cnn step
with four workers on two cores (py-spy, 2026-12-05/06: ``Path.replace`` and ``Path.open``).
The step now only stores two values; the thread writes them when they changed, at most every
:data:`WRITE_EVERY_S`. A rank that waits in a collective releases the GIL, so its last state
("reducing") reaches the file within that interval, long before any collective timeout; a
rank stopped or spinning in Python leaves an older state, which is what marks it as behind.
"""

from __future__ import annotations

import threading
from pathlib import Path

#: Longest delay between a state change and its write.
WRITE_EVERY_S = 0.2


class Heartbeat:
    """This rank's (completed steps, phase), written by a daemon thread; a no-op without a
    path. Use as a context manager, or call :meth:`close` (which writes the last state)."""

    def __init__(self, progress_path: str | None, rank: int, step: int) -> None:
        self._target = Path(f"{progress_path}.rank{rank}") if progress_path else None
        self._state = (step, "")
        self._written: tuple[int, str] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if self._target is not None:
            self._write()
            self._thread = threading.Thread(target=self._run, name="pactrain-heartbeat",
                                            daemon=True)
            self._thread.start()

    def beat(self, step: int, phase: str = "") -> None:
        """Record ``step`` completed steps and the phase (no I/O here)."""
        self._state = (step, phase)

    def reducing(self) -> None:
        """Record that this rank's backward pass is done for the current step."""
        self._state = (self._state[0], "reducing")

    def _write(self) -> None:
        state = self._state  # one read: the tuple is replaced whole, never mutated
        if state == self._written or self._target is None:
            return
        tmp = self._target.with_name(self._target.name + ".tmp")
        tmp.write_text(f"{state[0]} {state[1]}".strip())
        tmp.replace(self._target)
        self._written = state

    def _run(self) -> None:
        while not self._stop.wait(WRITE_EVERY_S):
            self._write()

    def close(self) -> None:
        """Stop the thread and write the last state."""
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
        self._write()

    def __enter__(self) -> Heartbeat:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
