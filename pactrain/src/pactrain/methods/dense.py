"""`dense`: PyTorch's own all-reduce hook, with pruning active, as the exact reference.

The hook is ``torch.distributed.algorithms.ddp_comm_hooks.default_hooks.allreduce_hook``
(divide by the world size, all-reduce the whole bucket in fp32). Pruning still runs and the
training loop zeroes pruned gradients after the reduction, so the update equals what the
compacted fp32 tier produces: the difference between the two is only the bytes sent.
On the wire: every bucket, whole, in fp32.

(No ``from __future__ import annotations`` here: DDP checks the hook's annotations at
runtime and rejects string annotations.)
"""


import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

from pactrain.accounting import PayloadCounter
from pactrain.methods import MethodConfig, MethodSpec, register_method


@dataclass
class DenseState:
    """State of the dense hook: the group and the payload counter."""

    process_group: dist.ProcessGroup | None
    payload: PayloadCounter = field(default_factory=PayloadCounter)
    comm_seconds: float = 0.0

    def __getstate__(self) -> dict[str, Any]:
        return {"payload": self.payload, "comm_seconds": self.comm_seconds}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.process_group = None
        self.payload = state["payload"]
        self.comm_seconds = state["comm_seconds"]


def dense_hook(state: DenseState, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    """Count the bucket's bytes, then delegate to PyTorch's ``allreduce_hook`` (timed from
    launch to completion, like PacTrain's collectives, for ``comm_s_per_step``)."""
    buffer = bucket.buffer()
    state.payload.add(buffer.numel() * buffer.element_size(), "all_reduce")
    if bucket.is_last():
        state.payload.end_step()
    start = time.perf_counter()
    future = default_hooks.allreduce_hook(state.process_group, bucket)

    def record(_: torch.futures.Future) -> None:
        state.comm_seconds += time.perf_counter() - start

    future.add_done_callback(record)
    return future


@dataclass
class DenseMethod:
    """The :class:`pactrain.methods.CommMethod` of ``dense``."""

    state: DenseState

    @property
    def hook(self) -> Callable[[DenseState, dist.GradBucket], torch.futures.Future]:
        return dense_hook

    @property
    def payload(self) -> PayloadCounter:
        return self.state.payload

    def summary(self) -> dict[str, Any]:
        steps = self.state.payload.steps
        return {"tier_counts": {},
                "comm_s_per_step": self.state.comm_seconds / steps if steps else None}


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
