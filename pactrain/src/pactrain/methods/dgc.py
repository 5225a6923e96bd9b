"""`dgc`: Deep Gradient Compression (Lin et al., ICLR 2018), on a DDP hook.

Algorithm, per bucket and step:
1. Local gradient clipping: scale the bucket so its norm is at most ``clip_norm / sqrt(N)``
   (the paper's N^-1/2 rule: the sum over N workers then respects ``clip_norm``).
2. Momentum correction (memory): ``u = m u + g``, ``v = v + u``.
3. Sparsify ``v``: the ``k`` largest entries, found by DGC's sampled threshold plus an
   exact top-k among the candidates. During warm-up the density falls exponentially
   (25%, 6.25%, 1.56%, ... down to the target) over ``warmup_steps`` steps.
4. Momentum-factor masking: clear ``u`` and ``v`` where entries were sent.
5. All-gather (value, index) pairs, sum, divide by N.

On the wire: as ``topk`` (``k`` fp32 values and int32 indices per rank, all-gathered).
Because the momentum is applied here, the optimizer must run *without* momentum:
``DGCMethod.optimizer_momentum`` is 0 and training loops should honour it.

Options: ``density`` (default ``1 - sparsity``), ``momentum`` (0.9), ``clip_norm`` (5.0,
``None`` disables), ``warmup_steps`` (5), ``sample_fraction`` (0.01).
"""


import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.distributed as dist

from pactrain.accounting import PayloadCounter
from pactrain.baselines.communicator import allgather_sparse
from pactrain.baselines.compressors import k_for, sampled_topk_compress
from pactrain.baselines.memory import MomentumCorrectionMemory, bucket_layout
from pactrain.methods import MethodConfig, MethodSpec, register_method
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
    """Group, schedule, clipping, momentum memory, sampler and payload counter."""

    process_group: dist.ProcessGroup | None
    density: float
    memory: MomentumCorrectionMemory
    generator: torch.Generator
    clip_norm: float | None = 5.0
    warmup_steps: int = 5
    sample_fraction: float = 0.01
    step: int = 0
    payload: PayloadCounter = field(default_factory=PayloadCounter)


def clip_locally(flat: torch.Tensor, clip_norm: float | None, world: int) -> torch.Tensor:
    """Scale ``flat`` down to norm ``clip_norm / sqrt(world)`` if it is longer."""
    if clip_norm is None:
        return flat
    limit = clip_norm / math.sqrt(world)
    norm = float(flat.norm())
    return flat * (limit / norm) if norm > limit else flat


def dgc_hook(state: DGCState, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    """Clip, correct momentum, sparsify, mask momentum, all-gather; result is the mean."""
    world = dist.get_world_size(state.process_group)
    flat, index = bucket.buffer(), bucket.index()
    velocity = state.memory.compensate(
        index, clip_locally(flat, state.clip_norm, world), bucket_layout(bucket.parameters())
    )
    density = warmup_density(state.step, state.density, state.warmup_steps)
    sparse = sampled_topk_compress(
        velocity, k_for(flat.numel(), density), state.generator, state.sample_fraction
    )
    state.memory.update_sparse(index, sparse.indices)
    if bucket.is_last():
        state.step += 1
        state.payload.end_step()
    fut = allgather_sparse(sparse, state.process_group, state.payload)
    return fut.then(lambda f: f.value().div_(world))


@dataclass
class DGCMethod:
    """The :class:`pactrain.methods.CommMethod` of ``dgc``."""

    state: DGCState
    optimizer_momentum: float = 0.0

    @property
    def hook(self) -> Callable[[DGCState, dist.GradBucket], torch.futures.Future]:
        return dgc_hook

    @property
    def payload(self) -> PayloadCounter:
        return self.state.payload

    def summary(self) -> dict[str, Any]:
        s = self.state
        return {"density": s.density, "momentum": s.memory.momentum, "clip_norm": s.clip_norm,
                "warmup_steps": s.warmup_steps, "optimizer_momentum": self.optimizer_momentum}

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
        density=density_option(config),
        memory=MomentumCorrectionMemory(float(o.get("momentum", 0.9))),
        generator=torch.Generator().manual_seed(config.seed * 7919 + config.rank),
        clip_norm=None if clip is None else float(clip),
        warmup_steps=int(o.get("warmup_steps", 5)),
        sample_fraction=float(o.get("sample_fraction", 0.01)),
    )
    return DGCMethod(state)


SPEC = register_method(MethodSpec(
    name="dgc", factory=make_dgc, uses_pruning=False, lossy=True,
    description="Deep Gradient Compression: momentum correction, local clipping, warm-up",
))
