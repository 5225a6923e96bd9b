"""`fp16`: PyTorch's ``fp16_compress_hook`` (half-precision all-reduce), as a baseline.

On the wire: every bucket, whole, in fp16 (2 bytes per entry), summed by all-reduce and
divided by the world size; PyTorch casts the result back to fp32. No pruning. Counted
and timed by the state's :class:`~pactrain.compression.communicator.Communicator`.
(``bf16_compress_hook`` is the bf16 sibling, but gloo refuses bf16 all-reduce, so on CPU
only fp16 is offered.)
"""


from dataclasses import InitVar, dataclass, field
from typing import Any

import torch
import torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

from pactrain.compression.communicator import Communicator
from pactrain.methods import HookedMethod, MethodConfig, MethodSpec, register_method


@dataclass
class Fp16State:
    """Only the communicator (group, payload, time): nothing else survives a step."""

    process_group: InitVar[dist.ProcessGroup | None]
    comm: Communicator = field(init=False)

    def __post_init__(self, process_group: dist.ProcessGroup | None) -> None:
        self.comm = Communicator(process_group)


def fp16_hook(state: Fp16State, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    """Count 2 bytes per entry, then delegate to PyTorch's ``fp16_compress_hook`` (timed
    by the communicator)."""
    comm = state.comm
    comm.count(bucket.buffer().numel() * 2)
    if bucket.is_last():
        comm.end_step()
    return comm.timed(lambda: default_hooks.fp16_compress_hook(comm.process_group, bucket))


@dataclass
class Fp16Method(HookedMethod):
    """The :class:`pactrain.methods.CommMethod` of ``fp16``."""

    state: Fp16State

    hook_function = staticmethod(fp16_hook)

    def facts(self) -> dict[str, Any]:
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
