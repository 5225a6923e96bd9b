"""`dense`: PyTorch's own all-reduce hook, with pruning active, as the exact reference.

The hook is ``torch.distributed.algorithms.ddp_comm_hooks.default_hooks.allreduce_hook``
(divide by the world size, all-reduce the whole bucket in fp32). Pruning still runs and the
training loop zeroes pruned gradients after the reduction, so the update equals what the
compacted fp32 tier produces: the difference between the two is only the bytes sent.
On the wire: every bucket, whole, in fp32. The state's
:class:`~pactrain.compression.communicator.Communicator` counts it and times PyTorch's
collective from launch to completion (``comm_s_per_step``), as for every method.

(No ``from __future__ import annotations`` here: DDP checks the hook's annotations at
runtime and rejects string annotations.)
"""


from dataclasses import InitVar, dataclass, field
from typing import Any

import torch
import torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

from pactrain.compression.communicator import Communicator
from pactrain.methods import HookedMethod, MethodConfig, MethodSpec, register_method


@dataclass
class DenseState:
    """State of the dense hook: its communicator (group, payload, time)."""

    process_group: InitVar[dist.ProcessGroup | None]
    comm: Communicator = field(init=False)

    def __post_init__(self, process_group: dist.ProcessGroup | None) -> None:
        self.comm = Communicator(process_group)


def dense_hook(state: DenseState, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    """Count the bucket's bytes, then delegate to PyTorch's ``allreduce_hook`` (timed by
    the communicator)."""
    comm = state.comm
    buffer = bucket.buffer()
    comm.count(buffer.numel() * buffer.element_size())
    if bucket.is_last():
        comm.end_step()
    return comm.timed(lambda: default_hooks.allreduce_hook(comm.process_group, bucket))


@dataclass
class DenseMethod(HookedMethod):
    """The :class:`pactrain.methods.CommMethod` of ``dense``."""

    state: DenseState

    hook_function = staticmethod(dense_hook)


def make_dense(
    process_group: dist.ProcessGroup | None, ddp_model: Any, config: MethodConfig,
    tracker: Any,
) -> DenseMethod:
    """Factory registered as ``dense``."""
    return DenseMethod(DenseState(process_group))


SPEC = register_method(MethodSpec(
    name="dense", factory=make_dense, uses_pruning=True, lossy=False,
    description="PyTorch allreduce_hook on whole buckets (pruning on: the exact reference)",
))
