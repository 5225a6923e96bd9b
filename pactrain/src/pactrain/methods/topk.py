"""`topk`: top-k sparsification with error feedback, exchanged by all-gather.

Algorithm, per bucket and step:
1. ``acc = g + residual`` (memory: :class:`pactrain.baselines.memory.ResidualMemory`).
2. Keep the ``k = ceil(density * numel)`` entries of ``acc`` largest in magnitude.
3. ``residual = acc`` with the kept entries zeroed (what was not sent waits locally).
4. All-gather the kept (value, index) pairs; every rank sums them and divides by N.

On the wire: ``k`` fp32 values and ``k`` int32 indices per rank and bucket, all-gathered:
the receive volume grows with N because each rank's indices differ.

Options: ``density`` (default ``1 - config.sparsity``: the same fraction of entries that
PacTrain keeps, so both send the same information per rank).
"""


from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.distributed as dist

from pactrain.accounting import PayloadCounter
from pactrain.baselines.communicator import allgather_sparse
from pactrain.baselines.compressors import k_for, topk_compress
from pactrain.baselines.memory import ResidualMemory, bucket_layout
from pactrain.methods import MethodConfig, MethodSpec, register_method


@dataclass
class TopKState:
    """Group, density, error-feedback memory (``None`` disables it) and payload counter."""

    process_group: dist.ProcessGroup | None
    density: float
    memory: ResidualMemory | None = field(default_factory=ResidualMemory)
    payload: PayloadCounter = field(default_factory=PayloadCounter)

    def __getstate__(self) -> dict[str, Any]:
        return {"density": self.density, "memory": self.memory, "payload": self.payload}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.process_group = None
        self.__dict__.update(state)


def topk_hook(state: TopKState, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    """Compensate, select, remember the rest, all-gather; the result is the mean."""
    flat, index = bucket.buffer(), bucket.index()
    layout = bucket_layout(bucket.parameters())
    acc = state.memory.compensate(index, flat, layout) if state.memory else flat
    sparse = topk_compress(acc, k_for(flat.numel(), state.density))
    if state.memory:
        state.memory.update_sparse(index, acc, sparse.indices)
    if bucket.is_last():
        state.payload.end_step()
    world = dist.get_world_size(state.process_group)
    fut = allgather_sparse(sparse, state.process_group, state.payload)
    return fut.then(lambda f: f.value().div_(world))


@dataclass
class TopKMethod:
    """The :class:`pactrain.methods.CommMethod` of ``topk``."""

    state: TopKState

    @property
    def hook(self) -> Callable[[TopKState, dist.GradBucket], torch.futures.Future]:
        return topk_hook

    @property
    def payload(self) -> PayloadCounter:
        return self.state.payload

    def summary(self) -> dict[str, Any]:
        return {"density": self.state.density, "error_feedback": self.state.memory is not None}

    def state_dict(self) -> dict[str, Any]:
        return {"memory": self.state.memory.state_dict() if self.state.memory else None}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if self.state.memory and state["memory"] is not None:
            self.state.memory.load_state_dict(state["memory"])


def density_option(config: MethodConfig) -> float:
    """``options["density"]`` or, by default, PacTrain's density ``1 - sparsity``."""
    density = float(config.options.get("density", 1.0 - config.sparsity))
    if not 0.0 < density <= 1.0:
        raise ValueError(
            f"top-k density must be in (0, 1], got {density} (from sparsity "
            f"{config.sparsity}); pass options={{'density': 0.01}} or a sparsity below 1"
        )
    return density


def make_topk(
    process_group: dist.ProcessGroup | None, ddp_model: Any, config: MethodConfig, tracker: Any
) -> TopKMethod:
    """Factory registered as ``topk``."""
    memory = ResidualMemory() if config.error_feedback_or(True) else None
    return TopKMethod(TopKState(process_group, density_option(config), memory))


SPEC = register_method(MethodSpec(
    name="topk", factory=make_topk, uses_pruning=False, lossy=True,
    description="top-k with error feedback; values and indices all-gathered",
))
