"""`no-comm`: the compute floor, for measurement only (gradients are never exchanged).

Why it exists: a method's step time is compute plus whatever communication and compression
work the backward pass cannot hide. Running the same model, batch and harness with a hook
that sends nothing gives the compute floor; ``step time - floor`` is the *exposed*
communication of every other method (`pactrain bench` reports it per row). Ranks train
on their own shards without averaging, so the model it produces is not a data-parallel
model: never use it to train.

On the wire: nothing (DDP's start-up broadcast of the weights aside).
"""


from dataclasses import dataclass, field
from typing import Any

import torch
import torch.distributed as dist

from pactrain.compression.communicator import Communicator
from pactrain.methods import HookedMethod, MethodConfig, MethodSpec, register_method


@dataclass
class NoCommState:
    """Only a communicator that never talks: it counts steps, no bytes and no seconds
    (so ``comm_s_per_step`` is 0, reported like every other method's)."""

    comm: Communicator = field(default_factory=Communicator)


def no_comm_hook(state: NoCommState, bucket: dist.GradBucket,
                 ) -> torch.futures.Future[torch.Tensor]:
    """Return the local gradient unchanged, at once."""
    if bucket.is_last():
        state.comm.end_step()
    future: torch.futures.Future[torch.Tensor] = torch.futures.Future()
    future.set_result(bucket.buffer())
    return future


@dataclass
class NoCommMethod(HookedMethod):
    """The :class:`pactrain.methods.CommMethod` of ``no-comm``."""

    state: NoCommState

    hook_function = staticmethod(no_comm_hook)

    def facts(self) -> dict[str, Any]:
        return {"compute_floor": True}


def make_no_comm(process_group: dist.ProcessGroup | None, ddp_model: Any,
                 config: MethodConfig, tracker: Any) -> NoCommMethod:
    """Factory registered as ``no-comm``."""
    return NoCommMethod(NoCommState())


SPEC = register_method(MethodSpec(
    name="no-comm", factory=make_no_comm, uses_pruning=False, lossy=True,
    description="compute floor for measurements: gradients stay local (never train "
                "with it)",
))
