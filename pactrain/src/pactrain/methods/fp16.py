"""`fp16`: PyTorch's ``fp16_compress_hook`` (half-precision all-reduce), as a baseline.

On the wire: every bucket, whole, in fp16 (2 bytes per entry), summed by all-reduce and
divided by the world size; PyTorch casts the result back to fp32. No pruning.
(``bf16_compress_hook`` is the bf16 sibling, but gloo refuses bf16 all-reduce, so on CPU
only fp16 is offered.)
"""


from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

from pactrain.accounting import PayloadCounter
from pactrain.methods import MethodConfig, MethodSpec, register_method


@dataclass
class Fp16State:
    """The group and the payload counter (nothing else survives a step)."""

    process_group: dist.ProcessGroup | None
    payload: PayloadCounter = field(default_factory=PayloadCounter)

    def __getstate__(self) -> dict[str, Any]:
        return {"payload": self.payload}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.process_group = None
        self.payload = state["payload"]


def fp16_hook(state: Fp16State, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    """Count 2 bytes per entry, then delegate to PyTorch's ``fp16_compress_hook``."""
    state.payload.add(bucket.buffer().numel() * 2, "all_reduce")
    if bucket.is_last():
        state.payload.end_step()
    return default_hooks.fp16_compress_hook(state.process_group, bucket)


@dataclass
class Fp16Method:
    """The :class:`pactrain.methods.CommMethod` of ``fp16``."""

    state: Fp16State

    @property
    def hook(self) -> Callable[[Fp16State, dist.GradBucket], torch.futures.Future]:
        return fp16_hook

    @property
    def payload(self) -> PayloadCounter:
        return self.state.payload

    def summary(self) -> dict[str, Any]:
        return {"bytes_per_entry": 2}


def make_fp16(
    process_group: dist.ProcessGroup | None, ddp_model: Any, config: MethodConfig, tracker: Any
) -> Fp16Method:
    """Factory registered as ``fp16``."""
    return Fp16Method(Fp16State(process_group))


SPEC = register_method(MethodSpec(
    name="fp16", factory=make_fp16, uses_pruning=False, lossy=True,
    description="PyTorch fp16_compress_hook: whole buckets all-reduced in half precision",
))
