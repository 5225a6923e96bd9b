"""Memories: what a compressor leaves behind locally, to be added back next step (GRACE's
memory). None of them communicate.

Everything here is keyed by the parameter's canonical name in the model
(``model.named_parameters()``), never by DDP bucket index or object id. Why: DDP rebuilds
its buckets after the first iteration of *every* process (digits-cnn at
``bucket_cap_mb=0.01``: one bucket of all eight tensors at the first step, three buckets
after it), so a resumed run starts in another layout than the one the checkpoint was
written in, and ``id(param)`` differs in a new process. A memory keyed by either adds what
it remembered to the wrong entries after a resume.

- :class:`ParameterNames`, :class:`BucketSlot`: where each named parameter sits in a bucket.
- :class:`ResidualMemory`: error feedback, one residual per parameter, used per parameter
  (top-k) or laid out per bucket (PacTrain's compaction hook).
- :class:`MomentumCorrectionMemory`: DGC's momentum and velocity per parameter.
- :class:`BucketPieces`: for per-bucket state that someone else owns (PyTorch's PowerSGD);
  re-lays it when the bucket layout changes and checkpoints it per parameter.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

import torch

if TYPE_CHECKING:
    import torch.distributed as dist
    from torch import nn


class BucketSlot(NamedTuple):
    """One parameter's place in a bucket's flat buffer.

    Attributes:
        name: canonical name (``named_parameters()``), the key of per-parameter state.
        index: position in ``named_parameters()`` (seeds per-parameter random draws).
        offset, numel: the parameter's entries are ``buffer[offset:offset + numel]``.
        shape: the parameter's shape (PowerSGD views it as a matrix).
    """

    name: str
    index: int
    offset: int
    numel: int
    shape: tuple[int, ...]


class ParameterNames:
    """Canonical names of a model's parameters, looked up from the objects a bucket holds.

    Built once per process at factory time: ``id(param)`` is only meaningful inside one
    process, the name is what a checkpoint can carry to the next.

    Args:
        model: the ``DistributedDataParallel`` wrapper or the module it wraps.
    """

    def __init__(self, model: nn.Module) -> None:
        module = getattr(model, "module", model)
        self._by_id = self._index(module.named_parameters())

    @classmethod
    def of(cls, named: Iterable[tuple[str, torch.Tensor]]) -> ParameterNames:
        """Names from ``(name, parameter)`` pairs instead of a module (e.g. a pruner's)."""
        names = cls.__new__(cls)
        names._by_id = cls._index(named)
        return names

    @staticmethod
    def _index(named: Iterable[tuple[str, torch.Tensor]]) -> dict[int, tuple[int, str]]:
        return {id(p): (i, name) for i, (name, p) in enumerate(named)}

    def find(self, param: torch.Tensor) -> tuple[int, str] | None:
        """(index, name) of ``param``, or ``None`` if it is not one of these parameters."""
        return self._by_id.get(id(param))

    def slots(self, bucket: dist.GradBucket) -> tuple[BucketSlot, ...]:
        """The bucket's parameters in bucket order, each with its slice of ``buffer()``
        (DDP lays a bucket's gradients out back to back in that order)."""
        slots, offset = [], 0
        for param in bucket.parameters():
            found = self.find(param)
            if found is None:
                raise ValueError(
                    f"bucket {bucket.index()} holds a parameter that is not in the model the "
                    "method was made for; pass the DistributedDataParallel wrapper the hook "
                    "is registered on to the method factory"
                )
            index, name = found
            slots.append(BucketSlot(name, index, offset, param.numel(), tuple(param.shape)))
            offset += param.numel()
        return tuple(slots)


def _check_named(kind: str, state: dict[Any, Any]) -> None:
    """Refuse per-bucket state of older checkpoints (integer keys) instead of dropping it."""
    bad = [key for key in state if not isinstance(key, str)]
    if bad:
        raise ValueError(
            f"this checkpoint keeps {kind} per bucket index ({bad[:3]}), which cannot be "
            "placed into this run's buckets; it was written before memories were keyed by "
            "parameter name: start the run again without resume"
        )


class _Laid(NamedTuple):
    """A bucket's layout as the memory last saw it, and its flat residual (if any)."""

    slots: tuple[BucketSlot, ...]
    flat: torch.Tensor | None


class _Compact(NamedTuple):
    """A bucket's residual at its ``kept`` positions, in their order (the authority for
    those positions while it exists; the flat tensor's copy of them is stale)."""

    slots: tuple[BucketSlot, ...]
    kept: torch.Tensor
    values: torch.Tensor


class ResidualMemory:
    """Error feedback (Seide et al. 2014; Stich et al. 2018): keep what was not delivered,
    one residual per parameter name (:attr:`residuals`), added back next step.

    Two views of the same residuals, one per kind of hook:

    - Per parameter (top-k compresses each parameter on its own): :meth:`compensate`
      returns ``g + residual``; :meth:`update_sparse` stores ``compensated`` with the sent
      entries zeroed.
    - Per bucket (PacTrain's compaction works on a bucket's kept entries at once):
      :meth:`compensate_kept`, :meth:`store_kept`, :meth:`drop_bucket`. The bucket's
      parameters' residuals are then views into one flat tensor in bucket coordinates, so
      the hook adds and stores them with one vectorised op per bucket. Positions pruned
      later are never read again, so a mask change needs no remapping.

    While the hook calls :meth:`compensate_kept` and :meth:`store_kept` with the same
    ``kept`` positions step after step, the residual lives compacted, in kept order, and
    both are one contiguous pass (``add_``, ``copy_``) over the kept entries. Why: an
    ``index_select``/``index_copy_`` at scattered positions of the bucket-sized tensor was
    4.6% of a packed worker's CPU (fashion-resnet18, 90% sparse, py-spy), the residual
    passes as costly as the whole gather. Anything else that reads the residuals (a new
    ``kept``, another layout, :meth:`bucket_residual`, :attr:`residuals`, a checkpoint)
    first writes the compact copy back into the flat tensor (:meth:`_write_back`), so
    every view sees exactly what the scattered writes would have left.

    A hook uses one view; the checkpoint (:meth:`state_dict`) is per name either way.

    DDP's bucket rebuild and a resume: a bucket whose parameters differ from the last call
    means DDP laid its buckets out anew. Then every bucket's layout is forgotten at once,
    not only this one's, because a parameter may have moved into a bucket whose turn comes
    before its old bucket's in the step (handling one bucket at a time lost its residual);
    each bucket is laid out again from the per-name residuals on its next call. After
    :meth:`load_state_dict` the residuals are per name with no bucket at all, and are laid
    out the same way.
    """

    def __init__(self) -> None:
        self._residuals: dict[str, torch.Tensor] = {}
        self._laid: dict[int, _Laid] = {}
        self._compact: dict[int, _Compact] = {}

    @property
    def residuals(self) -> dict[str, torch.Tensor]:
        """Each parameter's residual by name (compact copies written back first)."""
        self._write_back_all()
        return self._residuals

    # -- per parameter ---------------------------------------------------------------------
    def compensate(self, name: str, grad: torch.Tensor) -> torch.Tensor:
        """``grad`` plus the parameter's residual, as a new tensor (``grad`` is untouched)."""
        residual = self._residuals.get(name)
        return grad.clone() if residual is None else grad + residual

    def update_sparse(
        self, name: str, compensated: torch.Tensor, sent_indices: torch.Tensor
    ) -> None:
        """Remember ``compensated`` except the entries at ``sent_indices`` (they were sent)."""
        residual = compensated.clone()
        residual[sent_indices] = 0.0
        self._residuals[name] = residual

    # -- per bucket ------------------------------------------------------------------------
    def bucket_residual(self, index: int, slots: tuple[BucketSlot, ...],
                        device: torch.device) -> torch.Tensor | None:
        """Bucket ``index``'s residual, flat in bucket coordinates, for its parameters
        ``slots`` (``None``: none of them has one). Pass the same ``slots`` object every
        step: an identical one is recognised without comparing its entries."""
        self._write_back(index)
        laid = self._laid.get(index)
        if laid is None or laid.slots is not slots:
            laid = self._lay_out(index, slots, device)
        return laid.flat

    def _compact_for(self, index: int, slots: tuple[BucketSlot, ...],
                     kept: torch.Tensor) -> _Compact | None:
        """The bucket's compact residual if it was stored for these very ``slots`` and
        ``kept`` objects (the hook's cached layout); otherwise write it back, ``None``."""
        compact = self._compact.get(index)
        if compact is not None and compact.slots is slots and compact.kept is kept:
            return compact
        self._write_back(index)
        return None

    def compensate_kept(self, index: int, slots: tuple[BucketSlot, ...], kept: torch.Tensor,
                        values: torch.Tensor) -> torch.Tensor:
        """``values`` (the bucket's entries at ``kept``) plus their residual, in place."""
        compact = self._compact_for(index, slots, kept)
        if compact is not None:
            return values.add_(compact.values)
        flat = self.bucket_residual(index, slots, values.device)
        if flat is not None:
            values.add_(flat.index_select(0, kept))
        return values

    def store_kept(self, index: int, slots: tuple[BucketSlot, ...], kept: torch.Tensor,
                   error: torch.Tensor) -> None:
        """Remember ``error`` (what was meant minus what was delivered) at ``kept``: kept
        compact until the positions or the layout change (see the class doc)."""
        compact = self._compact_for(index, slots, kept)
        if compact is not None:
            compact.values.copy_(error)
            return
        if self.bucket_residual(index, slots, error.device) is None:
            self._bind(index, slots, torch.zeros(
                _extent(slots), dtype=torch.float32, device=error.device))
        self._compact[index] = _Compact(self._laid[index].slots, kept, error.clone())

    def _write_back(self, index: int) -> None:
        """Write bucket ``index``'s compact residual into its flat tensor and drop it."""
        compact = self._compact.pop(index, None)
        if compact is not None:
            flat = self._laid[index].flat
            assert flat is not None  # bound by store_kept, kept while the compact lives
            flat.index_copy_(0, compact.kept, compact.values)

    def _write_back_all(self) -> None:
        for index in list(self._compact):
            self._write_back(index)

    def drop_bucket(self, index: int) -> None:
        """Forget bucket ``index``'s residuals (a lossless tier delivered them)."""
        self._compact.pop(index, None)
        laid = self._laid.get(index)
        if laid is None or laid.flat is None:
            return
        for slot in laid.slots:
            self._residuals.pop(slot.name, None)
        self._laid[index] = _Laid(laid.slots, None)

    def _lay_out(self, index: int, slots: tuple[BucketSlot, ...],
                 device: torch.device) -> _Laid:
        laid = self._laid.get(index)
        if laid is not None and laid.slots == slots:  # the same layout, a new tuple
            laid = _Laid(slots, laid.flat)
            self._laid[index] = laid
            return laid
        if laid is not None:
            # DDP rebuilt its buckets: forget every bucket's layout (see the class doc).
            # The per-name residuals stay valid: views keep their old flat tensors alive.
            self._write_back_all()
            self._laid.clear()
        if not any(slot.name in self._residuals for slot in slots):
            laid = _Laid(slots, None)
            self._laid[index] = laid
            return laid
        flat = torch.zeros(_extent(slots), dtype=torch.float32, device=device)
        for slot in slots:
            piece = self._residuals.get(slot.name)
            if piece is None:
                continue
            if piece.numel() != slot.numel:
                raise ValueError(
                    f"the residual of {slot.name!r} has {piece.numel()} entries, the "
                    f"parameter {slot.numel}: the checkpoint was written for another model; "
                    "resume with the model it was written with"
                )
            flat[slot.offset:slot.offset + slot.numel] = piece.reshape(-1)
        self._bind(index, slots, flat)
        return self._laid[index]

    def _bind(self, index: int, slots: tuple[BucketSlot, ...],
              flat: torch.Tensor) -> torch.Tensor:
        """Make each parameter's residual a view of ``flat``, the bucket's residual."""
        for slot in slots:
            self._residuals[slot.name] = flat[slot.offset:slot.offset + slot.numel]
        self._laid[index] = _Laid(slots, flat)
        return flat

    # -- checkpoint ------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {"residuals": {name: r.clone() for name, r in self.residuals.items()}}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        _check_named("residuals", state["residuals"])
        self._residuals = {name: r.clone() for name, r in state["residuals"].items()}
        self._laid.clear()
        self._compact.clear()


def _extent(slots: tuple[BucketSlot, ...]) -> int:
    """Entries of the flat buffer the slots lie in (they tile it, in order)."""
    return slots[-1].offset + slots[-1].numel if slots else 0


class MomentumCorrectionMemory:
    """DGC's momentum correction and momentum-factor masking (Lin et al. 2018, sec. 3.2).

    Per parameter: ``u = m * u + g`` (local momentum), ``v = v + u`` (accumulated
    velocity); the compressor picks entries of ``v``; for the sent entries both ``v`` and
    ``u`` are cleared, so stale momentum does not keep pushing entries that were already
    applied. The optimizer must then run without its own momentum (it is applied here).
    """

    def __init__(self, momentum: float = 0.9) -> None:
        if not 0.0 <= momentum < 1.0:
            raise ValueError(f"momentum must be in [0, 1), got {momentum}")
        self.momentum = momentum
        self.u: dict[str, torch.Tensor] = {}
        self.v: dict[str, torch.Tensor] = {}

    def compensate(self, name: str, grad: torch.Tensor) -> torch.Tensor:
        """Accumulate ``grad``; returns the parameter's velocity ``v`` (the stored tensor)."""
        u = self.u.get(name)
        if u is None:
            u = self.u[name] = torch.zeros_like(grad)
            self.v[name] = torch.zeros_like(grad)
        u.mul_(self.momentum).add_(grad)
        return self.v[name].add_(u)

    def update_sparse(self, name: str, sent_indices: torch.Tensor) -> None:
        self.v[name][sent_indices] = 0.0
        self.u[name][sent_indices] = 0.0

    def state_dict(self) -> dict[str, Any]:
        return {
            "momentum": self.momentum,
            "u": {name: t.clone() for name, t in self.u.items()},
            "v": {name: t.clone() for name, t in self.v.items()},
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        _check_named("momentum buffers", state["u"])
        self.momentum = float(state["momentum"])
        self.u = {name: t.clone() for name, t in state["u"].items()}
        self.v = {name: t.clone() for name, t in state["v"].items()}


#: A flat buffer's pieces in order: (parameter name, length of its piece).
Pieces = tuple[tuple[str, int], ...]


class BucketPieces:
    """Keeps a dict of per-bucket flat buffers that someone else owns (PyTorch's PowerSGD
    memories, keyed by bucket index) in step with DDP's bucket layout, and checkpoints it
    per parameter.

    Why not :class:`ResidualMemory`'s views: the owner replaces its buffers (PowerSGD
    assigns a new error tensor per bucket every step), so per-parameter views of them would
    go stale; the pieces are cut out of the owner's buffers when the layout changes.

    Steps, called by the hook *before* the owner reads bucket ``index``'s buffer:

    1. :meth:`align` with the bucket's current pieces. Unchanged: nothing to do.
    2. Changed (DDP rebuilt its buckets): *every* bucket's buffer is split into
       per-parameter pieces (``pending``) and taken out of the dict, because a parameter
       may move from a bucket whose turn comes later in the step.
    3. If any of the bucket's parameters has a pending piece, its buffer is rebuilt from
       the pieces in the new order (zeros for parameters without one).

    :meth:`load_state_dict` only fills ``pending``: the resumed run's layout is known at
    its first hook call, not at load time.

    Args:
        buffers: the owner's dict (shared, never rebound: the owner keeps writing to it).
    """

    def __init__(self, buffers: dict[int, torch.Tensor]) -> None:
        self.buffers = buffers
        self.layouts: dict[int, Pieces] = {}
        self.pending: dict[str, torch.Tensor] = {}

    def align(self, index: int, pieces: Pieces) -> None:
        """Make ``buffers[index]`` (if there is state for it) laid out as ``pieces``."""
        known = self.layouts.get(index)
        if known == pieces:
            return
        if known is not None:
            self._release_all()
        self.layouts[index] = pieces
        if any(name in self.pending for name, _ in pieces):
            self.buffers[index] = torch.cat([self._take(name, length) for name, length in pieces])

    def _take(self, name: str, length: int) -> torch.Tensor:
        piece = self.pending.pop(name, None)
        if piece is None:
            return torch.zeros(length, dtype=torch.float32)
        if piece.numel() != length:
            raise ValueError(
                f"the stored piece of {name!r} has {piece.numel()} entries, this run needs "
                f"{length}: the checkpoint was written with other method options (e.g. "
                "another PowerSGD rank); resume with the options it was written with"
            )
        return piece

    def _split(self, index: int) -> dict[str, torch.Tensor]:
        buffer, pieces = self.buffers.get(index), self.layouts.get(index, ())
        if buffer is None:
            return {}
        if buffer.numel() != sum(length for _, length in pieces):
            raise RuntimeError(
                f"bucket {index}'s buffer has {buffer.numel()} entries, its recorded layout "
                f"{sum(length for _, length in pieces)}: call align() before the owner "
                "writes a bucket's buffer"
            )
        out, offset = {}, 0
        for name, length in pieces:
            out[name] = buffer[offset:offset + length].clone()
            offset += length
        return out

    def _release_all(self) -> None:
        for index in list(self.layouts):
            self.pending.update(self._split(index))
            self.buffers.pop(index, None)
        self.layouts.clear()

    def state_dict(self) -> dict[str, torch.Tensor]:
        """One piece per parameter that has state (empty pieces included: they record
        that a parameter has none, e.g. a bias PowerSGD does not compress)."""
        pieces = {name: piece.clone() for name, piece in self.pending.items()}
        for index in self.layouts:
            pieces.update(self._split(index))
        return pieces

    def load_state_dict(self, pieces: dict[str, torch.Tensor]) -> None:
        _check_named("PowerSGD memories", pieces)
        self.buffers.clear()
        self.layouts.clear()
        self.pending = {name: piece.clone() for name, piece in pieces.items()}
