"""`terngrad`: TernGrad (Wen et al., NeurIPS 2017): stochastic ternary dense gradients.

Algorithm, per bucket and step:
1. Per tensor of the bucket, clip entries to ``clip_sigma`` standard deviations (2.5).
2. Per tensor, the scale ``s = max |g|``, shared across workers by an all-reduce MAX
   (the paper's scaler sharing), so that every worker's codes mean the same thing.
3. Code ``t = sign(g) * Bernoulli(|g| / s)`` in {-1, 0, 1} as int8 (unbiased: E[s t] = g;
   :func:`pactrain.compression.compressors.ternary_codes`, PacTrain's own ternary code).
   The uniform draws of each tensor come from a generator seeded by (seed, rank, step,
   parameter) (:func:`pactrain.compression.compressors.uniform_draws`, the draws of
   PacTrain's ternary tier): the same numbers reach the same weights whatever DDP's bucket
   layout, so a resumed run (which starts in another layout) repeats the uninterrupted
   one exactly, with only the step to checkpoint.
4. All-reduce SUM of the int8 codes; the mean gradient is ``s * sum / N``. Steps 2 to 4
   are :func:`pactrain.compression.protocols.allreduce_ternary`, the ternary summation
   protocol PacTrain's ternary tiers share (scales agreed on their own group and waited
   for, then the codes).

On the wire per rank and bucket: one fp32 scale per tensor, then one byte per entry
(4x less than fp32), for every entry: there is no pruning, so nothing is skipped.
Valid while N <= 127 (int8 sums). No error feedback (unbiasedness replaces it).

Options: ``clip_sigma`` (2.5; ``None`` disables).
"""


from dataclasses import InitVar, dataclass, field
from typing import Any

import torch
import torch.distributed as dist

from pactrain.compression.communicator import Communicator
from pactrain.compression.compressors import (
    MAX_TERNARY_WORLD_SIZE,
    clip_to_sigma,
    segment_bounds,
    uniform_draws,
)
from pactrain.compression.memory import BucketSlot, ParameterNames
from pactrain.compression.protocols import allreduce_ternary, scale_group_for
from pactrain.methods import HookedMethod, MethodConfig, MethodSpec, register_method


@dataclass
class TernGradState:
    """Parameter names, clipping bound, what seeds the draws (run seed, rank, step count)
    and the communicator (group, payload, time)."""

    process_group: InitVar[dist.ProcessGroup | None]
    names: ParameterNames
    seed: int = 0
    rank: int = 0
    step: int = 0
    clip_sigma: float | None = 2.5
    scale_group: Any = None
    """A second group over the same ranks for the scales' MAX (``None``: the main group);
    see :func:`pactrain.compression.protocols.agree_scales`."""
    comm: Communicator = field(init=False)

    def __post_init__(self, process_group: dist.ProcessGroup | None) -> None:
        self.comm = Communicator(process_group)


def bucket_draws(state: TernGradState, slots: tuple[BucketSlot, ...], numel: int
                 ) -> torch.Tensor:
    """U[0, 1) per entry of a bucket, drawn per parameter (see step 3 of the module doc);
    ``slots`` tile the bucket's ``numel`` entries in order."""
    # drawn on the CPU (seeded CPU generators: the same numbers on every device), then moved
    return uniform_draws(torch.empty(numel, dtype=torch.float32), state.seed, state.rank,
                         state.step, [slot.index for slot in slots],
                         [slot.numel for slot in slots])


def terngrad_hook(
    state: TernGradState, bucket: dist.GradBucket
) -> torch.futures.Future[torch.Tensor]:
    """Clip, share scales, ternarize, sum codes; the result is the mean gradient."""
    world = state.comm.world_size
    slots = state.names.slots(bucket)
    lengths = [slot.numel for slot in slots]
    flat = bucket.buffer()
    if state.clip_sigma is not None:
        flat = torch.cat([clip_to_sigma(seg, state.clip_sigma)
                          for seg in torch.split(flat, lengths)])
    # drawn now: the step moves on below
    uniform = bucket_draws(state, slots, flat.numel()).to(flat.device)
    if bucket.is_last():
        state.step += 1
        state.comm.end_step()
    fut = allreduce_ternary(state.comm, flat, segment_bounds(lengths), uniform,
                            state.scale_group)
    return fut.then(lambda f: f.value().div_(world))


@dataclass
class TernGradMethod(HookedMethod):
    """The :class:`pactrain.methods.CommMethod` of ``terngrad``."""

    state: TernGradState

    hook_function = staticmethod(terngrad_hook)

    def facts(self) -> dict[str, Any]:
        return {"clip_sigma": self.state.clip_sigma, "bytes_per_entry": 1}

    def state_dict(self) -> dict[str, Any]:
        """The step count: with it the draws of every later step are determined."""
        return {"step": self.state.step}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.state.step = int(state["step"])


def make_terngrad(
    process_group: dist.ProcessGroup | None, ddp_model: Any, config: MethodConfig, tracker: Any
) -> TernGradMethod:
    """Factory registered as ``terngrad``."""
    clip = config.options.get("clip_sigma", 2.5)
    return TernGradMethod(TernGradState(
        process_group=process_group,
        names=ParameterNames(ddp_model),
        seed=config.seed,
        rank=config.rank,
        clip_sigma=None if clip is None else float(clip),
        scale_group=scale_group_for(process_group, config.world_size),
    ))


SPEC = register_method(MethodSpec(
    name="terngrad", factory=make_terngrad, uses_pruning=False, lossy=True,
    description="TernGrad: shared-scale stochastic ternary codes summed as int8",
    options=("clip_sigma",), max_world_size=MAX_TERNARY_WORLD_SIZE,
))
