"""`powersgd`: PyTorch's ``PowerSGDState`` + ``powerSGD_hook`` (Vogels et al. 2019).

On the wire, per bucket after ``start_iter`` steps: for every gradient viewed as an n x m
matrix that is worth compressing, the factors P (n x r) and Q (m x r) in fp32, each by
all-reduce; the remaining tensors (biases, norms, small matrices) whole in fp32. Before
``start_iter`` the hook all-reduces the bucket uncompressed (PyTorch's warm-up; it must be
at least 2 with error feedback because DDP rebuilds buckets after the first iteration).

Registered as ``powersgd`` (rank ``options["rank"]``, default 4) and as ``powersgd-r1``,
``powersgd-r2`` (rank 1 and 2, whatever ``options["rank"]`` says: the name is the rank,
so a benchmark can race every rank by method name).

Options (``MethodConfig.options``): ``rank`` (default 4; ``powersgd`` only),
``start_iter`` (default 2), ``min_compression_rate`` (default 2), ``warm_start`` (default
True).
``batched_powerSGD_hook`` is not offered: it fails on CPU in torch 2.13.
With several buckets on gloo, ``powerSGD_hook`` alone aborts with a collective mismatch
(see :mod:`pactrain.compression.communicator`); this wrapper serialises the buckets.
The state's :class:`~pactrain.compression.communicator.Communicator` counts the payload
and times each bucket's collectives from the hook call to their completion.

Checkpoints and resume (two parts, both needed for a bit-identical resume):

1. Per-parameter memories. PyTorch keeps the error and the P and Q memories in dicts keyed
   by bucket index, each a flat buffer laid out by that bucket's tensors, and its
   ``__getstate__`` saves them as they are. :meth:`PowerSGDMethod.state_dict` instead cuts
   each buffer into per-parameter pieces (:func:`memory_pieces` reproduces the hook's
   layout: the error in bucket order; P and Q of the compressed tensors only, grouped by
   matrix shape in the order shapes first appear), and the hook lays them into whatever
   bucket each parameter is in before PyTorch reads it
   (:class:`pactrain.compression.memory.BucketPieces`). So the state survives any bucket
   layout. The numpy ``rng`` (it seeds Q when a bucket's memories are created) and
   ``iter`` are saved as they are.
2. Replaying the checkpoint's buckets. A resumed process runs its first step in DDP's
   first-iteration layout (digits-cnn at ``bucket_cap_mb=0.01``: one bucket of all tensors
   instead of three). PowerSGD's arithmetic is per tensor, but its matrix products are
   BLAS calls whose rounding depends on where the operands sit in memory (measured: at
   rank 1, ``P = M Q`` differs in the last bits when M or Q is shifted by one float), and
   where they sit is set by the bucket's composition. So when a bucket is a union of the
   checkpoint's buckets, the hook hands PyTorch one :class:`ReplayBucket` per checkpoint
   bucket (same index, same tensors in the same order, a fresh buffer like DDP's) and
   copies the results back: the step computes exactly what the uninterrupted run did. DDP's
   rebuild after that step restores the checkpoint's layout and the hook delegates directly
   again. (A bucket that is no such union, e.g. after changing ``bucket_cap_mb`` on resume,
   is delegated directly: exact up to that rounding.)

Limitation: with ``warm_start=False`` Q is redrawn per bucket every step from the shared
rng, so a bucket delegated directly in a layout other than the checkpoint's (the
parenthesis above) also draws other Q values.
"""


import functools
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as psgd

from pactrain.compression.communicator import BucketSerializer, Communicator
from pactrain.compression.memory import BucketPieces, BucketSlot, ParameterNames, Pieces
from pactrain.methods import HookedMethod, MethodConfig, MethodSpec, register_method

#: The matrix approximation rank of ``powersgd`` when ``options["rank"]`` is not given.
DEFAULT_RANK = 4


def memory_pieces(
    slots: tuple[BucketSlot, ...], inner: psgd.PowerSGDState
) -> tuple[Pieces, Pieces, Pieces]:
    """(error, P, Q) pieces of one bucket, in the order ``powerSGD_hook`` lays them out.

    The hook views each gradient as ``shape[0] x rest`` and compresses it if
    ``psgd._should_compress`` says so (its own test, so the two cannot disagree), with rank
    ``r = min(n, m, rank)``; it then groups the compressed tensors by matrix shape, shapes
    in order of first appearance. Uncompressed tensors get empty P and Q pieces, so a
    checkpoint records that they have no factors.
    """
    error = tuple((slot.name, slot.numel) for slot in slots)
    by_shape: dict[tuple[int, int], list[tuple[str, int]]] = {}
    empty: list[tuple[str, int]] = []
    for slot in slots:
        n = slot.shape[0] if slot.shape else 1
        m = slot.numel // n if n else 0
        rank = min(n, m, inner.matrix_approximation_rank)
        if psgd._should_compress(n, m, rank, inner.min_compression_rate)[0]:
            by_shape.setdefault((n, m), []).append((slot.name, rank))
        else:
            empty.append((slot.name, 0))
    ordered = [(name, n, m, r) for (n, m), group in by_shape.items() for name, r in group]
    p = tuple((name, n * r) for name, n, _, r in ordered) + tuple(empty)
    q = tuple((name, m * r) for name, _, m, r in ordered) + tuple(empty)
    return error, p, q


class ReplayBucket:
    """A stand-in for ``dist.GradBucket``: one of the checkpoint's buckets, cut out of the
    bucket DDP actually formed (see part 2 of the module docstring).

    Offers what ``powerSGD_hook`` and this module read: ``index``, ``buffer`` (a fresh
    tensor, placed in memory like DDP's bucket buffers), ``gradients`` (views of it),
    ``parameters`` and ``is_last``.
    """

    def __init__(self, index: int, buffer: torch.Tensor, parameters: list[torch.Tensor],
                 last: bool) -> None:
        self._index, self._buffer, self._parameters, self._last = (
            index, buffer, parameters, last)

    def index(self) -> int:
        return self._index

    def buffer(self) -> torch.Tensor:
        return self._buffer

    def parameters(self) -> list[torch.Tensor]:
        return self._parameters

    def is_last(self) -> bool:
        return self._last

    def gradients(self) -> list[torch.Tensor]:
        views, offset = [], 0
        for param in self._parameters:
            views.append(self._buffer[offset:offset + param.numel()].view_as(param))
            offset += param.numel()
        return views


@dataclass
class PowerSGDWrapperState:
    """PyTorch's state, our communicator (payload, time; PyTorch's hook talks itself), and
    the per-parameter keeping of PyTorch's per-bucket memories (see the module docstring).

    The payload is read off PyTorch's own bookkeeping: ``total_numel_after_compression``
    grows by exactly the entries sent (P, Q and the uncompressed tensors) when a bucket is
    compressed, and does not move during warm-up, when the whole bucket is sent.
    """

    inner: psgd.PowerSGDState
    names: ParameterNames
    comm: Communicator = field(default_factory=Communicator)
    serializer: BucketSerializer = field(default_factory=BucketSerializer)
    #: the checkpoint's buckets (index -> parameter names in bucket order), to replay
    saved_buckets: dict[int, tuple[str, ...]] = field(default_factory=dict)
    memories: dict[str, BucketPieces] = field(init=False)

    def __post_init__(self) -> None:
        self.memories = {
            "error": BucketPieces(self.inner.error_dict),
            "p": BucketPieces(self.inner.p_memory_dict),
            "q": BucketPieces(self.inner.q_memory_dict),
        }

    def align(self, index: int, slots: tuple[BucketSlot, ...]) -> tuple[int, int]:
        """Lay bucket ``index``'s memories out for its tensors ``slots``; returns the P and
        Q lengths PyTorch will need (checked after the hook ran)."""
        pieces = memory_pieces(slots, self.inner)
        for memory, layout in zip(self.memories.values(), pieces, strict=True):
            memory.align(index, layout)
        return sum(n for _, n in pieces[1]), sum(n for _, n in pieces[2])

    def buckets(self) -> dict[int, tuple[str, ...]]:
        """The buckets the memories are laid out for now (index -> names)."""
        return {index: tuple(name for name, _ in pieces)
                for index, pieces in self.memories["error"].layouts.items()}

    def replay_plan(self, slots: tuple[BucketSlot, ...]) -> list[tuple[int, tuple[str, ...]]]:
        """The checkpoint's buckets that make up this bucket, in index order, when it is
        exactly a union of them and not one of them; else ``[]`` (delegate directly)."""
        names = tuple(slot.name for slot in slots)
        if not self.saved_buckets or names in self.saved_buckets.values():
            return []
        inside = set(names)
        plan = sorted((i, g) for i, g in self.saved_buckets.items() if set(g) <= inside)
        covered = [name for _, group in plan for name in group]
        return plan if sorted(covered) == sorted(names) else []


def _delegate(state: PowerSGDWrapperState, bucket: Any,
              slots: tuple[BucketSlot, ...]) -> torch.futures.Future[torch.Tensor]:
    """Align the memories, run ``powerSGD_hook`` on ``bucket``, count what it sent."""
    p_size, q_size = state.align(bucket.index(), slots)
    before = state.inner.total_numel_after_compression
    fut = psgd.powerSGD_hook(state.inner, bucket)
    p_memory = state.inner.p_memory_dict.get(bucket.index())
    if p_memory is not None and p_memory.numel() != p_size:
        raise RuntimeError(
            f"powerSGD_hook laid bucket {bucket.index()}'s P memory out as {p_memory.numel()} "
            f"entries, pactrain.methods.powersgd.memory_pieces as {p_size} (Q: {q_size}): "
            "this torch version changed the layout; update memory_pieces to match it"
        )
    sent = state.inner.total_numel_after_compression - before
    state.comm.count((sent or bucket.buffer().numel()) * 4)
    return fut


def _replay(state: PowerSGDWrapperState, bucket: dist.GradBucket,
            slots: tuple[BucketSlot, ...], plan: list[tuple[int, tuple[str, ...]]],
            ) -> torch.futures.Future[torch.Tensor]:
    """Run ``powerSGD_hook`` once per checkpoint bucket of ``plan`` (each waited for, so
    collectives keep one order on every rank) and write the results into ``bucket``."""
    flat = bucket.buffer()
    members = {slot.name: (slot, param) for slot, param in zip(slots, bucket.parameters(),
                                                                strict=True)}
    for position, (index, names) in enumerate(plan):
        group = [members[name] for name in names]
        buffer = torch.cat([flat[s.offset:s.offset + s.numel] for s, _ in group])
        last = bucket.is_last() and position == len(plan) - 1
        stand_in = ReplayBucket(index, buffer, [param for _, param in group], last)
        result = _delegate(state, stand_in, state.names.slots(stand_in)).wait()
        offset = 0
        for s, _ in group:
            flat[s.offset:s.offset + s.numel].copy_(result[offset:offset + s.numel])
            offset += s.numel
    done: torch.futures.Future[torch.Tensor] = torch.futures.Future()
    done.set_result(flat)
    return done


def powersgd_hook(
    state: PowerSGDWrapperState, bucket: dist.GradBucket
) -> torch.futures.Future[torch.Tensor]:
    """Delegate to ``powerSGD_hook`` (with the bucket's memories laid out for it), or
    replay the checkpoint's buckets right after a resume (module docstring, part 2).

    Buckets are serialised (:class:`pactrain.compression.communicator.BucketSerializer`):
    ``powerSGD_hook`` issues its P and Q all-reduces from future callbacks, and with more
    than one bucket gloo then sees a different collective order on different ranks. That
    also makes the re-laying safe: every earlier bucket's callbacks, which write the
    memories, have run.
    """
    state.serializer.before()
    slots = state.names.slots(bucket)
    plan = state.replay_plan(slots)
    fut = state.comm.timed(lambda: _replay(state, bucket, slots, plan) if plan
                           else _delegate(state, bucket, slots))
    if bucket.is_last():
        state.comm.end_step()
    return state.serializer.after(fut)


@dataclass
class PowerSGDMethod(HookedMethod):
    """The :class:`pactrain.methods.CommMethod` of ``powersgd`` and its rank variants."""

    state: PowerSGDWrapperState

    hook_function = staticmethod(powersgd_hook)

    def facts(self) -> dict[str, Any]:
        inner = self.state.inner
        return {
            "rank": inner.matrix_approximation_rank,
            "start_iter": inner.start_powerSGD_iter,
            "compression_rate": (
                inner.total_numel_before_compression / inner.total_numel_after_compression
                if inner.total_numel_after_compression else 1.0
            ),
        }

    def state_dict(self) -> dict[str, Any]:
        """Step count, the rng, compression statistics, every memory per parameter and the
        buckets they were laid out for (to replay them after the resume)."""
        inner = self.state.inner
        return {
            "rank": inner.matrix_approximation_rank,
            "iter": inner.iter,
            "rng": inner.rng.get_state(),
            "numel_before": inner.total_numel_before_compression,
            "numel_after": inner.total_numel_after_compression,
            "next_stats_report": inner.next_stats_report,
            "memories": {kind: m.state_dict() for kind, m in self.state.memories.items()},
            "buckets": self.state.buckets(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        inner = self.state.inner
        if int(state["rank"]) != inner.matrix_approximation_rank:
            raise ValueError(
                f"the checkpoint was written with PowerSGD rank {state['rank']}, this run "
                f"uses rank {inner.matrix_approximation_rank}; resume with the method or "
                f"options it was written with (e.g. powersgd-r{state['rank']})"
            )
        inner.iter = int(state["iter"])
        inner.rng.set_state(state["rng"])
        inner.total_numel_before_compression = int(state["numel_before"])
        inner.total_numel_after_compression = int(state["numel_after"])
        inner.next_stats_report = int(state["next_stats_report"])
        for kind, memory in self.state.memories.items():
            memory.load_state_dict(state["memories"][kind])
        self.state.saved_buckets = {int(i): tuple(names)
                                    for i, names in state["buckets"].items()}


def make_powersgd(
    process_group: dist.ProcessGroup | None, ddp_model: Any, config: MethodConfig,
    tracker: Any, rank: int | None = None,
) -> PowerSGDMethod:
    """Factory of ``powersgd`` (``rank=None``: ``options["rank"]``, default 4) and of its
    variants, whose fixed ``rank`` wins over ``options["rank"]`` (the bench passes its
    default PowerSGD rank to every PowerSGD method)."""
    options = config.options
    inner = psgd.PowerSGDState(
        process_group=process_group,
        matrix_approximation_rank=rank if rank is not None else int(
            options.get("rank", DEFAULT_RANK)),
        start_powerSGD_iter=int(options.get("start_iter", 2)),
        min_compression_rate=float(options.get("min_compression_rate", 2)),
        use_error_feedback=config.error_feedback_or(True),
        warm_start=bool(options.get("warm_start", True)),
        random_seed=config.seed,
    )
    return PowerSGDMethod(PowerSGDWrapperState(inner, ParameterNames(ddp_model),
                                               Communicator(process_group)))


for _name, _rank, _description in (
    ("powersgd", None, "PyTorch PowerSGD (rank 4 by default), error feedback and warm start"),
    ("powersgd-r1", 1, "PyTorch PowerSGD at rank 1, error feedback and warm start"),
    ("powersgd-r2", 2, "PyTorch PowerSGD at rank 2, error feedback and warm start"),
):
    register_method(MethodSpec(
        name=_name, factory=functools.partial(make_powersgd, rank=_rank), uses_pruning=False,
        lossy=True, description=_description,
        options=(("rank",) if _rank is None else ()) + (
            "start_iter", "min_compression_rate", "warm_start"),
    ))
