"""`powersgd`: PyTorch's ``PowerSGDState`` + ``powerSGD_hook`` (Vogels et al. 2019).

On the wire, per bucket after ``start_iter`` steps: for every gradient viewed as an n x m
matrix that is worth compressing, the factors P (n x r) and Q (m x r) in fp32, each by
all-reduce; the remaining tensors (biases, norms, small matrices) whole in fp32. Before
``start_iter`` the hook all-reduces the bucket uncompressed (PyTorch's warm-up; it must be
at least 2 with error feedback because DDP rebuilds buckets after the first iteration).

Options (``MethodConfig.options``): ``rank`` (default 4), ``start_iter`` (default 2),
``min_compression_rate`` (default 2), ``warm_start`` (default True).
``batched_powerSGD_hook`` is not offered: it fails on CPU in torch 2.13.
With several buckets on gloo, ``powerSGD_hook`` alone aborts with a collective mismatch
(see :mod:`pactrain.baselines.communicator`); this wrapper serialises the buckets.
"""


from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as psgd

from pactrain.accounting import PayloadCounter
from pactrain.baselines.communicator import BucketSerializer
from pactrain.methods import MethodConfig, MethodSpec, register_method


@dataclass
class PowerSGDWrapperState:
    """PyTorch's state plus our payload counter.

    The payload is read off PyTorch's own bookkeeping: ``total_numel_after_compression``
    grows by exactly the entries sent (P, Q and the uncompressed tensors) when a bucket is
    compressed, and does not move during warm-up, when the whole bucket is sent.
    """

    inner: psgd.PowerSGDState
    payload: PayloadCounter = field(default_factory=PayloadCounter)
    serializer: BucketSerializer = field(default_factory=BucketSerializer)


def powersgd_hook(
    state: PowerSGDWrapperState, bucket: dist.GradBucket
) -> torch.futures.Future[torch.Tensor]:
    """Delegate to ``powerSGD_hook`` and count the fp32 entries it sent.

    Buckets are serialised (:class:`pactrain.baselines.communicator.BucketSerializer`):
    ``powerSGD_hook`` issues its P and Q all-reduces from future callbacks, and with more
    than one bucket gloo then sees a different collective order on different ranks.
    """
    state.serializer.before()
    before = state.inner.total_numel_after_compression
    fut = psgd.powerSGD_hook(state.inner, bucket)
    sent = state.inner.total_numel_after_compression - before
    if sent == 0:
        sent = bucket.buffer().numel()
    state.payload.add(sent * 4, "all_reduce")
    if bucket.is_last():
        state.payload.end_step()
    return state.serializer.after(fut)


@dataclass
class PowerSGDMethod:
    """The :class:`pactrain.methods.CommMethod` of ``powersgd``."""

    state: PowerSGDWrapperState

    @property
    def hook(self) -> Callable[[PowerSGDWrapperState, dist.GradBucket], torch.futures.Future]:
        return powersgd_hook

    @property
    def payload(self) -> PayloadCounter:
        return self.state.payload

    def summary(self) -> dict[str, Any]:
        inner = self.state.inner
        return {
            "rank": inner.matrix_approximation_rank,
            "start_iter": inner.start_powerSGD_iter,
            "compression_rate": (
                inner.total_numel_before_compression / inner.total_numel_after_compression
                if inner.total_numel_after_compression else 1.0
            ),
        }


def make_powersgd(
    process_group: dist.ProcessGroup | None, ddp_model: Any, config: MethodConfig, tracker: Any
) -> PowerSGDMethod:
    """Factory registered as ``powersgd``."""
    options = config.options
    inner = psgd.PowerSGDState(
        process_group=process_group,
        matrix_approximation_rank=int(options.get("rank", 4)),
        start_powerSGD_iter=int(options.get("start_iter", 2)),
        min_compression_rate=float(options.get("min_compression_rate", 2)),
        use_error_feedback=config.error_feedback_or(True),
        warm_start=bool(options.get("warm_start", True)),
        random_seed=config.seed,
    )
    return PowerSGDMethod(PowerSGDWrapperState(inner))


SPEC = register_method(MethodSpec(
    name="powersgd", factory=make_powersgd, uses_pruning=False, lossy=True,
    description="PyTorch PowerSGD (rank 4 by default), error feedback and warm start",
))
