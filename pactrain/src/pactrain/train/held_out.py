"""Held-out evaluation during training: accuracy against training wall time, in one run.

Why in the loop and not by stopping and resuming: a time-to-accuracy race that restarts
its workers for every evaluation pays process start-up, imports and the DDP bucket rebuild
again each time (10-20 s per chunk on a loaded 2-core machine, more than many chunks'
training) and measures the restarts as much as the method. Here rank 0 evaluates every
``every`` steps while the training clock is paused; all ranks then learn from one
1-element broadcast whether the run stops (target reached or time budget spent), so they
leave the loop at the same step.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.distributed as dist
from torch import nn

from pactrain.devices import collective_device
from pactrain.models import ModelSpec


@dataclass
class HeldOutCurve:
    """Rank 0's held-out metric at fixed step intervals, against training wall time.

    Attributes:
        spec: the model's spec (``evaluate``, ``primary_metric``, ``higher_is_better``).
        every: steps between evaluations (> 0).
        target: stop once the primary metric reaches it (``None``: never).
        budget_s: stop once this much training time is spent (``None``: never).
        points: ``(training seconds, steps done, metric)`` per evaluation.
        reached_s, reached_step: where the target was first reached.
        paused_s: time spent evaluating (left out of the training clock).
        paused_cpu_s: this process's CPU time spent evaluating (left out of the CPU
            seconds per step likewise).
    """

    spec: ModelSpec
    every: int
    target: float | None = None
    budget_s: float | None = None
    points: list[tuple[float, int, float]] = field(default_factory=list)
    reached_s: float | None = None
    reached_step: int | None = None
    paused_s: float = 0.0
    paused_cpu_s: float = 0.0

    def __post_init__(self) -> None:
        if self.every <= 0:
            raise ValueError(f"eval_every must be > 0, got {self.every}")

    def reached(self, metric: float) -> bool:
        if self.target is None:
            return False
        return metric >= self.target if self.spec.higher_is_better else metric <= self.target

    def after_step(self, steps_done: int, rank: int, model: nn.Module,
                   training_s: float) -> bool:
        """Evaluate if due; return whether every rank must stop now (collective when due).

        ``training_s`` is the training clock so far, evaluation pauses excluded.
        """
        if steps_done % self.every:
            return False
        stop = torch.zeros(1, dtype=torch.int32, device=collective_device())
        if rank == 0:
            paused, paused_cpu = time.perf_counter(), time.process_time()
            metric = float(self.spec.evaluate(model)[self.spec.primary_metric])
            model.train()
            self.paused_s += time.perf_counter() - paused
            self.paused_cpu_s += time.process_time() - paused_cpu
            self.points.append((training_s, steps_done, metric))
            if self.reached(metric) and self.reached_s is None:
                self.reached_s, self.reached_step = training_s, steps_done
            out_of_time = self.budget_s is not None and training_s >= self.budget_s
            stop.fill_(int(self.reached_s is not None or out_of_time))
        if dist.is_initialized():
            dist.broadcast(stop, src=0)
        return bool(stop[0])

    def result(self) -> dict[str, Any]:
        return {"eval_curve": [list(p) for p in self.points], "reached_s": self.reached_s,
                "reached_step": self.reached_step, "eval_paused_s": self.paused_s,
                "eval_target": self.target, "eval_metric": self.spec.primary_metric}
