"""`terngrad`: TernGrad (Wen et al., NeurIPS 2017): stochastic ternary dense gradients.

Algorithm, per bucket and step:
1. Per tensor of the bucket, clip entries to ``clip_sigma`` standard deviations (2.5).
2. Per tensor, the scale ``s = max |g|``, shared across workers by an all-reduce MAX
   (the paper's scaler sharing), so that every worker's codes mean the same thing.
3. Code ``t = sign(g) * Bernoulli(|g| / s)`` in {-1, 0, 1} as int8 (unbiased: E[s t] = g).
4. All-reduce SUM of the int8 codes; the mean gradient is ``s * sum / N``.

On the wire per rank and bucket: one fp32 scale per tensor, then one byte per entry
(4x less than fp32), for every entry: there is no pruning, so nothing is skipped.
Valid while N <= 127 (int8 sums). No error feedback (unbiasedness replaces it).

Options: ``clip_sigma`` (2.5; ``None`` disables).
"""


from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.distributed as dist

from pactrain.accounting import PayloadCounter
from pactrain.baselines.communicator import BucketSerializer, allreduce_ternary
from pactrain.baselines.compressors import clip_to_sigma, ternarize
from pactrain.methods import MethodConfig, MethodSpec, register_method


@dataclass
class TernGradState:
    """Group, clipping bound, per-rank random generator and payload counter."""

    process_group: dist.ProcessGroup | None
    generator: torch.Generator
    clip_sigma: float | None = 2.5
    payload: PayloadCounter = field(default_factory=PayloadCounter)
    serializer: BucketSerializer = field(default_factory=BucketSerializer)


def terngrad_hook(
    state: TernGradState, bucket: dist.GradBucket
) -> torch.futures.Future[torch.Tensor]:
    """Clip, share scales, ternarize, sum codes; the result is the mean gradient."""
    state.serializer.before()  # the codes' all-reduce is issued from a callback
    world = dist.get_world_size(state.process_group)
    lengths = [g.numel() for g in bucket.gradients()]
    flat = bucket.buffer()
    if state.clip_sigma is not None:
        flat = torch.cat([clip_to_sigma(seg, state.clip_sigma)
                          for seg in torch.split(flat, lengths)])
    if bucket.is_last():
        state.payload.end_step()

    def quantize(values: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        return ternarize(values, scale, state.generator)

    fut = allreduce_ternary(flat, lengths, state.process_group, state.payload, quantize)
    return state.serializer.after(fut.then(lambda f: f.value().div_(world)))


@dataclass
class TernGradMethod:
    """The :class:`pactrain.methods.CommMethod` of ``terngrad``."""

    state: TernGradState

    @property
    def hook(self) -> Callable[[TernGradState, dist.GradBucket], torch.futures.Future]:
        return terngrad_hook

    @property
    def payload(self) -> PayloadCounter:
        return self.state.payload

    def summary(self) -> dict[str, Any]:
        return {"clip_sigma": self.state.clip_sigma, "bytes_per_entry": 1}


def make_terngrad(
    process_group: dist.ProcessGroup | None, ddp_model: Any, config: MethodConfig, tracker: Any
) -> TernGradMethod:
    """Factory registered as ``terngrad``."""
    clip = config.options.get("clip_sigma", 2.5)
    return TernGradMethod(TernGradState(
        process_group=process_group,
        generator=torch.Generator().manual_seed(config.seed * 7919 + config.rank),
        clip_sigma=None if clip is None else float(clip),
    ))


SPEC = register_method(MethodSpec(
    name="terngrad", factory=make_terngrad, uses_pruning=False, lossy=True,
    description="TernGrad: shared-scale stochastic ternary codes summed as int8",
))
