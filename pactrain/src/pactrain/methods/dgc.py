"""`dgc`: Deep Gradient Compression (Lin et al., ICLR 2018), on a DDP hook.

Algorithm, per bucket and step, for each parameter of the bucket:
1. Local gradient clipping: scale the parameter's gradient so its norm is at most
   ``clip_norm / sqrt(N)`` (the paper's N^-1/2 rule: the sum over N workers then respects
   ``clip_norm``).
2. Momentum correction (memory, keyed by parameter name): ``u = m u + g``, ``v = v + u``.
3. Sparsify ``v``: the ``k`` largest entries, found by DGC's sampled threshold (sampled
   with a generator seeded per (seed, rank, step, parameter)) plus an exact top-k among
   the candidates. During warm-up the density falls exponentially (25%, 6.25%, 1.56%, ...
   down to the target) over ``warmup_steps`` steps.
4. Momentum-factor masking: clear ``u`` and ``v`` where entries were sent.
5. All-gather the bucket's (value, index) pairs
   (:func:`pactrain.compression.protocols.allgather_sparse`), sum, divide by N.

Why per parameter: clipping norms, top-k selections and a generator stream taken over
whole buckets change with DDP's bucket layout, which differs between the first step of a
process and the rest (so also right after a resume). Per parameter, a resumed run is
exactly the uninterrupted one.

On the wire: as ``topk`` (``k`` fp32 values and int32 indices per rank, all-gathered).
Because the momentum is applied here, the optimizer must run *without* momentum:
its spec declares ``momentum_in_hook``, and ``apply_hook_momentum`` turns the optimizer's off.

Options: ``density`` (default ``1 - sparsity``), ``momentum`` (0.9), ``clip_norm`` (5.0,
``None`` disables), ``warmup_steps`` (5), ``sample_fraction`` (0.01).
"""


import math
from dataclasses import InitVar, dataclass, field
from typing import Any

import torch
import torch.distributed as dist

from pactrain.compression.communicator import Communicator
from pactrain.compression.compressors import (
    SparseGradient,
    k_for,
    parameter_generator,
    sampled_topk_compress,
)
from pactrain.compression.memory import BucketSlot, MomentumCorrectionMemory, ParameterNames
from pactrain.compression.protocols import allgather_sparse_mean
from pactrain.methods import HookedMethod, MethodConfig, MethodSpec, register_method
from pactrain.methods.topk import density_option


def warmup_density(step: int, target: float, warmup_steps: int) -> float:
    """DGC's exponential warm-up: 0.25, 0.0625, ... (each stage 4x sparser) to ``target``."""
    if step >= warmup_steps:
        return target
    stages, density = [], 0.25
    while density > target:
        stages.append(density)
        density /= 4
    stages.append(target)
    return stages[min(len(stages) - 1, step * len(stages) // warmup_steps)]


@dataclass
class DGCState:
    """Parameter names, schedule, clipping, momentum memory, the sampler's seed and rank,
    the step count (warm-up position, draws) and the communicator (group, payload, time)."""

    process_group: InitVar[dist.ProcessGroup | None]
    names: ParameterNames
    density: float
    memory: MomentumCorrectionMemory
    seed: int = 0
    rank: int = 0
    clip_norm: float | None = 5.0
    warmup_steps: int = 5
    sample_fraction: float = 0.01
    step: int = 0
    comm: Communicator = field(init=False)

    def __post_init__(self, process_group: dist.ProcessGroup | None) -> None:
        self.comm = Communicator(process_group)


def clip_locally(flat: torch.Tensor, clip_norm: float | None, world: int) -> torch.Tensor:
    """Scale ``flat`` down to norm ``clip_norm / sqrt(world)`` if it is longer."""
    if clip_norm is None:
        return flat
    limit = clip_norm / math.sqrt(world)
    norm = float(flat.norm())
    return flat * (limit / norm) if norm > limit else flat


def dgc_hook(state: DGCState, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    """Per parameter: clip, correct momentum, sparsify, mask momentum; all-gather the
    bucket's selections; the result is the mean (:func:`allgather_sparse_mean`)."""
    world = state.comm.world_size
    density = warmup_density(state.step, state.density, state.warmup_steps)

    def select(slot: BucketSlot, grad: torch.Tensor) -> SparseGradient:
        velocity = state.memory.compensate(slot.name, clip_locally(grad, state.clip_norm, world))
        sampler = parameter_generator(state.seed, state.rank, state.step, slot.index)
        part = sampled_topk_compress(velocity, k_for(slot.numel, density), sampler,
                                     state.sample_fraction)
        state.memory.update_sparse(slot.name, part.indices)
        return part

    def count_step() -> None:
        state.step += 1

    return allgather_sparse_mean(state.comm, bucket, state.names.slots(bucket), select,
                                 on_last=count_step)


@dataclass
class DGCMethod(HookedMethod):
    """The :class:`pactrain.methods.CommMethod` of ``dgc``."""

    state: DGCState

    hook_function = staticmethod(dgc_hook)

    def facts(self) -> dict[str, Any]:
        s = self.state
        return {"density": s.density, "momentum": s.memory.momentum, "clip_norm": s.clip_norm,
                "warmup_steps": s.warmup_steps}

    def state_dict(self) -> dict[str, Any]:
        return {"memory": self.state.memory.state_dict(), "step": self.state.step}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.state.memory.load_state_dict(state["memory"])
        self.state.step = int(state["step"])


def make_dgc(
    process_group: dist.ProcessGroup | None, ddp_model: Any, config: MethodConfig, tracker: Any
) -> DGCMethod:
    """Factory registered as ``dgc``."""
    o = config.options
    clip = o.get("clip_norm", 5.0)
    state = DGCState(
        process_group=process_group,
        names=ParameterNames(ddp_model),
        density=density_option(config),
        memory=MomentumCorrectionMemory(float(o.get("momentum", 0.9))),
        seed=config.seed,
        rank=config.rank,
        clip_norm=None if clip is None else float(clip),
        warmup_steps=int(o.get("warmup_steps", 5)),
        sample_fraction=float(o.get("sample_fraction", 0.01)),
    )
    return DGCMethod(state)


SPEC = register_method(MethodSpec(
    name="dgc", factory=make_dgc, uses_pruning=False, lossy=True,
    description="Deep Gradient Compression: momentum correction, local clipping, warm-up",
    options=("density", "momentum", "clip_norm", "warmup_steps", "sample_fraction"),
    momentum_in_hook=True,
))
