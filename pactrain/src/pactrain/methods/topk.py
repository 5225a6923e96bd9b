"""`topk`: top-k sparsification with error feedback, exchanged by all-gather.

Algorithm, per bucket and step:
1. Per parameter of the bucket: ``acc = g + residual`` (memory:
   :class:`pactrain.compression.memory.ResidualMemory`, keyed by parameter name).
2. Per parameter, keep the ``k = ceil(density * numel)`` entries of ``acc`` largest in
   magnitude (layer-wise top-k, as GRACE compresses per tensor).
3. ``residual = acc`` with the kept entries zeroed (what was not sent waits locally).
4. All-gather the bucket's kept (value, index) pairs in one message
   (:func:`pactrain.compression.protocols.allgather_sparse`); every rank sums them and
   divides by N.

Why per parameter rather than over the whole bucket: a bucket-wide top-k picks different
entries when DDP lays the buckets out differently (it rebuilds them after the first
iteration of every process, so a resumed run's first step sees another layout); per
parameter the selection, the residuals and hence a resumed run are exactly those of an
uninterrupted one.

On the wire: ``k`` fp32 values and ``k`` int32 indices per rank and bucket (``k`` summed
over its parameters), all-gathered: the receive volume grows with N because each rank's
indices differ.

Options: ``density`` (default ``1 - config.sparsity``: the same fraction of entries that
PacTrain keeps, so both send the same information per rank).
"""


from dataclasses import InitVar, dataclass, field
from typing import Any

import torch
import torch.distributed as dist

from pactrain.compression.communicator import Communicator
from pactrain.compression.compressors import SparseGradient, k_for, topk_compress
from pactrain.compression.memory import BucketSlot, ParameterNames, ResidualMemory
from pactrain.compression.protocols import allgather_sparse_mean
from pactrain.methods import HookedMethod, MethodConfig, MethodSpec, register_method


@dataclass
class TopKState:
    """Parameter names, density, error-feedback memory (``None`` disables it) and the
    communicator (group, payload, time)."""

    process_group: InitVar[dist.ProcessGroup | None]
    names: ParameterNames
    density: float
    memory: ResidualMemory | None = field(default_factory=ResidualMemory)
    comm: Communicator = field(init=False)

    def __post_init__(self, process_group: dist.ProcessGroup | None) -> None:
        self.comm = Communicator(process_group)


def topk_hook(state: TopKState, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    """Per parameter: compensate, select, remember the rest; all-gather the bucket's
    selections; the result is the mean (:func:`allgather_sparse_mean`)."""
    def select(slot: BucketSlot, grad: torch.Tensor) -> SparseGradient:
        acc = state.memory.compensate(slot.name, grad) if state.memory else grad
        part = topk_compress(acc, k_for(slot.numel, state.density))
        if state.memory:
            state.memory.update_sparse(slot.name, acc, part.indices)
        return part

    return allgather_sparse_mean(state.comm, bucket, state.names.slots(bucket), select)


@dataclass
class TopKMethod(HookedMethod):
    """The :class:`pactrain.methods.CommMethod` of ``topk``."""

    state: TopKState

    hook_function = staticmethod(topk_hook)

    def facts(self) -> dict[str, Any]:
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
    return TopKMethod(TopKState(process_group, ParameterNames(ddp_model),
                                density_option(config), memory))


SPEC = register_method(MethodSpec(
    name="topk", factory=make_topk, uses_pruning=False, lossy=True,
    description="top-k with error feedback; values and indices all-gathered",
    options=("density",),
))
