"""What one training step is made of, as the estimate prices it: the gradient's tensors in
the order DDP hands them to the communication hook, which of them PacTrain prunes, and the
step's compute.

Why tensors and not a parameter count: the methods price different things. PacTrain sends
the kept entries of the pruned tensors and every entry of the others (biases, norms,
embeddings); PowerSGD compresses only matrices large enough to pay for their factors; and
DDP's buckets, which decide how much of the transfer hides under the backward pass, are
laid over tensors.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

#: DDP's first bucket when ``bucket_cap_mb`` is left unset (``torch.distributed``'s
#: ``_DEFAULT_FIRST_BUCKET_BYTES``, 1 MiB), and the cap of the others (25 MB, DDP's
#: ``bucket_cap_mb`` default).
FIRST_BUCKET_BYTES = 1024 * 1024
BUCKET_CAP_BYTES = 25 * 1024 * 1024

#: Rows of the matrices a gradient given only as a count is laid out in (PowerSGD's
#: factors depend on the shape; this is a width of a mid-sized transformer layer).
ROWS_OF_A_COUNT = 1024


@dataclass(frozen=True)
class Tensor:
    """One trainable parameter's gradient: name, shape, whether PacTrain prunes it, and
    the forward FLOPs of the work whose backward produces it (0: unknown)."""

    name: str
    shape: tuple[int, ...]
    prunable: bool
    flops: float = 0.0

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def matrix(self) -> tuple[int, int] | None:
        """The (rows, columns) PowerSGD views it as (``view(shape[0], -1)``); ``None``
        for a vector, which PowerSGD all-reduces uncompressed."""
        if len(self.shape) < 2:
            return None
        return self.shape[0], self.numel // self.shape[0]


@dataclass(frozen=True)
class Bucket:
    """Tensors reduced together, and the share of the backward pass done when the last of
    them is ready (DDP calls the hook then)."""

    tensors: tuple[Tensor, ...]
    ready_share: float

    @property
    def numel(self) -> int:
        return sum(t.numel for t in self.tensors)

    def kept(self, density: float) -> int:
        """Entries PacTrain keeps at ``density``: that share of the pruned tensors, every
        entry of the others."""
        return sum(round(t.numel * density) if t.prunable else t.numel for t in self.tensors)


@dataclass(frozen=True)
class Job:
    """What is estimated: a model's gradient and one worker's compute per step.

    Attributes:
        name: for the report.
        tensors: in registration order (DDP reverses it).
        compute_s: one worker's step without communication (forward, backward, optimizer),
            measured on the hardware the estimate is for.
        backward_share: the share of ``compute_s`` the backward pass takes: the window a
            bucket's transfer can hide in. A backward pass costs about twice the forward
            (Kaplan et al., "Scaling Laws for Neural Language Models", 2020: 2N FLOPs a
            token forward, 4N backward), so 2/3 of forward and backward; the optimizer and
            the data loading take the rest, hence 0.6 by default.
    """

    name: str
    tensors: tuple[Tensor, ...]
    compute_s: float
    backward_share: float = 0.6

    def __post_init__(self) -> None:
        if not self.tensors:
            raise ValueError(f"{self.name}: no trainable tensors to estimate")
        if self.compute_s <= 0:
            raise ValueError(f"{self.name}: compute per step must be > 0 s, got "
                             f"{self.compute_s}")
        if not 0 < self.backward_share <= 1:
            raise ValueError(f"backward_share must be in (0, 1], got {self.backward_share}")

    @property
    def numel(self) -> int:
        return sum(t.numel for t in self.tensors)

    def buckets(self, first_cap: int = FIRST_BUCKET_BYTES,
                cap: int = BUCKET_CAP_BYTES) -> list[Bucket]:
        """DDP's buckets: tensors in reverse registration order (the order backward
        produces them), a bucket closed once it holds ``first_cap`` bytes (the first) or
        ``cap`` (the others), as ``torch.distributed._compute_bucket_assignment_by_size``
        lays them out when DDP rebuilds its buckets after the first step. A bucket's
        ready share is the share of the backward pass's FLOPs done when its last tensor
        is produced (each layer's backward taken as a fixed multiple of its forward);
        without FLOPs, the share of the gradient's bytes."""
        by_flops = any(t.flops > 0 for t in self.tensors)
        weights = [t.flops if by_flops else float(t.numel) for t in reversed(self.tensors)]
        total = sum(weights)
        buckets: list[Bucket] = []
        current: list[Tensor] = []
        size, done, limit = 0, 0.0, first_cap
        for tensor, weight in zip(reversed(self.tensors), weights, strict=True):
            current.append(tensor)
            size += 4 * tensor.numel
            done += weight
            if size >= limit:
                buckets.append(Bucket(tuple(current), done / total))
                current, size, limit = [], 0, cap
        if current:
            buckets.append(Bucket(tuple(current), 1.0))
        return buckets


def job_of_count(parameters: int, compute_s: float, name: str = "") -> Job:
    """A job known only by its parameter count: matrices of :data:`ROWS_OF_A_COUNT`
    rows, all pruned (what a user without the model at hand can still ask about)."""
    if parameters < 1:
        raise ValueError(f"parameters must be >= 1, got {parameters}")
    columns, rest = divmod(parameters, ROWS_OF_A_COUNT)
    tensors = [Tensor(f"w{i}", (ROWS_OF_A_COUNT, 1024), True)
               for i in range(columns // 1024)]
    if columns % 1024:
        tensors.append(Tensor("w_last", (ROWS_OF_A_COUNT, columns % 1024), True))
    if rest:
        tensors.append(Tensor("rest", (rest,), False))
    return Job(name or f"{parameters:,} parameters", tuple(tensors), compute_s)


def layer_flops(model: nn.Module, inputs: Any) -> dict[str, float]:
    """Forward FLOPs of one batch, by the parameter whose gradient their backward
    produces last: each module's own FLOPs (its count less its children's, from
    ``torch.utils.flop_counter.FlopCounterMode``) go to the first parameter registered
    under it, since backward runs a module's own work (an attention's products) before it
    produces the gradients of the layers that fed it."""
    from torch.utils.flop_counter import FlopCounterMode

    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model(inputs)
    totals = {}
    for key, by_op in counter.get_flop_counts().items():
        if key != "Global":
            totals[key.partition(".")[2]] = float(sum(by_op.values()))
    names = [n for n, p in model.named_parameters() if p.requires_grad]
    out: dict[str, float] = {}
    for path, total in totals.items():
        prefix = f"{path}." if path else ""
        children = [c for c in totals if c != path and c.startswith(prefix)
                    and "." not in c[len(prefix):]]
        own = total - sum(totals[c] for c in children)
        first = next((n for n in names if n.startswith(prefix)), None)
        if first is not None and own > 0:
            out[first] = out.get(first, 0.0) + own
    return out


def job_of_model(name: str, compute_s: float) -> Job:
    """A model of the registry (:mod:`pactrain.models`): its trainable tensors, pruned
    by PacTrain's default rule (:func:`pactrain.selection.select_prunable`), with the
    FLOPs of a forward pass over a batch of its data (:func:`layer_flops`; without its
    data, the buckets' ready shares fall back to bytes)."""
    from pactrain.models import get_model
    from pactrain.selection import select_prunable

    spec = get_model(name)
    model = spec.build(0)
    selection = select_prunable(model)
    pruned = {id(p) for p in selection.params.values()}
    try:
        inputs, _ = next(iter(spec.batches(0, 1, 2, 0)))
        flops = layer_flops(model, inputs)
    except (FileNotFoundError, OSError):
        flops = {}
    seen: set[int] = set()
    tensors = []
    for param_name, param in model.named_parameters():
        if not param.requires_grad or id(param) in seen:
            continue
        seen.add(id(param))
        tensors.append(Tensor(param_name, tuple(param.shape), id(param) in pruned,
                              flops.get(param_name, 0.0)))
    return Job(name, tuple(tensors), compute_s)
