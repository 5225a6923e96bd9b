"""The communicator: the only code of any method that calls collectives (GRACE's
communicator).

One :class:`Communicator` per hook state launches every collective (all-reduce SUM or
MAX, all-gather), adds the bytes it hands over to a
:class:`pactrain.accounting.PayloadCounter` (per rank, before the ring factor) and times
it from launch to completion. So every method counts its payload and reports
``comm_s_per_step`` the same way, and an observer (PacTrain's adaptive policy) sees each
collective's size and duration. Hooks that delegate to PyTorch's own hooks (dense, fp16,
PowerSGD) count with :meth:`Communicator.count` and time with :meth:`Communicator.timed`.

Control traffic goes through it too (issue 22): the adaptive policy's probes, agreements
and barrier, and the mask tracker's verification and repair broadcast call
:meth:`Communicator.control_all_reduce`, :meth:`~Communicator.control_broadcast` and
:meth:`~Communicator.control_barrier`, blocking collectives counted apart
(:attr:`Communicator.control`, ``control_bytes_per_step``) and timed apart.

Time, three ways: ``collective_seconds`` sums each collective's launch-to-completion time
(what the policy's link model is fitted to; collectives in flight together count in
full); ``busy_seconds`` is the union of those intervals (the time at least one collective
of this hook was in flight: ``comm_s_per_step``); ``exposed_seconds`` is the time the
training step still waited on collectives once its last bucket was handed over (from
:meth:`Communicator.end_step` to :meth:`Communicator.note_backward_done`, which the
optimizer pre-hook calls).

The protocols built on it (the sparse all-gather of top-k and DGC, the ternary
all-reduce) are in :mod:`pactrain.compression.protocols`; FSDP2's reduce-scatter and
all-gather (:mod:`pactrain.fsdp.collectives`) and the two-level all-reduce
(:mod:`pactrain.compression.hierarchical`) go through it too.

Ordering: gloo matches collectives by the order in which each rank issues them. A hook
that issues a second collective from a future callback (PyTorch's PowerSGD, its P and Q
after the uncompressed tensors) races with the next bucket's first collective, issued by
the autograd thread, and ranks can disagree on the order (gloo aborts: "Received data
size doesn't match expected size"). :class:`BucketSerializer` makes each bucket wait for
the previous bucket's future before issuing anything, which keeps the order identical on
every rank. TernGrad's ternary protocol avoids the race by waiting for the scales in the
hook (:func:`~pactrain.compression.protocols.agree_scales`) and issuing the codes from the
hook too. PacTrain's hook does not wait: it starts the MAX from the hook
(:func:`~pactrain.compression.protocols.start_agreement`), and an
:class:`OrderedLauncher` issues each bucket's codes once its scales are in, in the order
the hook handed the buckets over, whichever thread completes them.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

import torch
import torch.distributed as dist

from pactrain.accounting import PayloadCounter

T = TypeVar("T")

#: Steps of compute time kept (:attr:`Communicator.compute_samples`; their median is used).
COMPUTE_SAMPLES = 8

#: Told the payload bytes and launch-to-completion seconds of each collective.
Observer = Callable[[int, float], None]


class Communicator:
    """Launches a hook's collectives, counts their payload and times them.

    Args:
        process_group: the group (``None``: the default group).
        observer: called with ``(payload bytes, seconds)`` when a collective launched by
            :meth:`all_reduce` or :meth:`all_gather` completes (e.g.
            :meth:`pactrain.policy.AdaptivePolicy.observe`, which fits its link model).

    Attributes:
        payload: bytes handed to the hook's collectives, and completed steps
            (:meth:`end_step`).
        control: bytes of control collectives (probes, agreements, mask checks).
        collective_seconds: launch-to-completion time of every hook collective, summed.
        busy_seconds: time at least one hook collective was in flight.
        exposed_seconds: time steps waited on collectives after their last bucket.
        control_seconds: time spent in control collectives (they block).
        compute_samples: the latest steps' compute seconds, from the first training
            forward (:meth:`note_forward_start`) to the last bucket (:meth:`end_step`):
            the forward and backward passes, which the operating point weighs the link
            against (:mod:`pactrain.operating_point`).
    """

    def __init__(self, process_group: Any = None, observer: Observer | None = None) -> None:
        self.process_group = process_group
        self.observer = observer
        self.payload = PayloadCounter()
        self.control = PayloadCounter()
        self.collective_seconds = 0.0
        self.busy_seconds = 0.0
        self.exposed_seconds = 0.0
        self.control_seconds = 0.0
        self._lock = threading.Lock()
        self._in_flight = 0
        self._busy_since = 0.0
        self._step_closed_at: float | None = None
        self._forward_started_at: float | None = None
        self.compute_samples: deque[float] = deque(maxlen=COMPUTE_SAMPLES)

    @property
    def world_size(self) -> int:
        return dist.get_world_size(self.process_group)

    @property
    def distributed(self) -> bool:
        """Whether collectives run at all (single-process use skips control traffic)."""
        return dist.is_available() and dist.is_initialized()

    def all_reduce(self, tensor: torch.Tensor, name: str = "all_reduce",
                   op: Any = dist.ReduceOp.SUM, group: Any = None,
                   ) -> torch.futures.Future[list[torch.Tensor]]:
        """Launch one async all-reduce of ``tensor`` in place (``group``: another group
        than the communicator's, e.g. PacTrain's group of the ternary scales); the future's
        value is ``[tensor]``."""
        nbytes = tensor.numel() * tensor.element_size()
        with self._lock:  # launches come from the hook and from OrderedLauncher callbacks
            self.payload.add(nbytes, name)
        group = group if group is not None else self.process_group
        start = self._launched()
        future = dist.all_reduce(tensor, op=op, group=group, async_op=True).get_future()
        return self._time(future, start, nbytes)

    def all_gather(self, outputs: list[torch.Tensor], tensor: torch.Tensor,
                   name: str = "all_gather") -> torch.futures.Future[Any]:
        """Launch one async all-gather of ``tensor`` into ``outputs`` (one per rank)."""
        nbytes = tensor.numel() * tensor.element_size()
        self.payload.add(nbytes, name)
        start = self._launched()
        future = dist.all_gather(outputs, tensor, group=self.process_group,
                                 async_op=True).get_future()
        return self._time(future, start, nbytes)

    def reduce_scatter(self, output: torch.Tensor, tensor: torch.Tensor, op: Any,
                       name: str = "reduce_scatter", group: Any = None) -> None:
        """Reduce-scatter ``tensor`` (``world x output.numel()`` entries) into ``output``
        and wait (FSDP2 calls its comms synchronously on the CPU). Counted as the whole
        input's bytes, like an all-reduce of it: the ring puts (N-1)/N of it on the wire."""
        self._blocking(tensor.numel() * tensor.element_size(), name,
                       lambda: dist.reduce_scatter_tensor(
                           output, tensor, op=op, group=group or self.process_group))

    def all_gather_into(self, output: torch.Tensor, tensor: torch.Tensor,
                        name: str = "all_gather", group: Any = None) -> None:
        """All-gather ``tensor`` from every rank into ``output`` (``world x`` its entries)
        and wait. Counted as the output's bytes (the ring puts (N-1)/N of them on the
        wire), so a reduce-scatter and an all-gather of one layout count the same."""
        self._blocking(output.numel() * output.element_size(), name,
                       lambda: dist.all_gather_into_tensor(
                           output, tensor, group=group or self.process_group))

    def all_to_all(self, output: torch.Tensor, tensor: torch.Tensor, output_splits: list[int],
                   input_splits: list[int], name: str = "all_to_all",
                   group: Any = None) -> None:
        """Send ``input_splits[r]`` entries of ``tensor`` to rank ``r`` and receive
        ``output_splits[r]`` from it into ``output``, and wait. Counted as the output's
        bytes (an all-gather of uneven rows counts what every rank receives, its own row
        included, like :meth:`all_gather_into`)."""
        self._blocking(output.numel() * output.element_size(), name,
                       lambda: dist.all_to_all_single(
                           output, tensor, output_split_sizes=output_splits,
                           input_split_sizes=input_splits,
                           group=group or self.process_group))

    def _blocking(self, nbytes: int, name: str, launch: Callable[[], Any]) -> None:
        with self._lock:
            self.payload.add(nbytes, name)
        start = self._launched()
        future: torch.futures.Future[None] = torch.futures.Future()
        self._time(future, start, nbytes)
        try:
            launch()
        finally:
            future.set_result(None)

    def count(self, nbytes: int, name: str = "all_reduce") -> None:
        """Count ``nbytes`` handed to a collective that someone else launches."""
        self.payload.add(nbytes, name)

    def timed(self, launch: Callable[[], torch.futures.Future[T]]) -> torch.futures.Future[T]:
        """Call ``launch`` (collectives someone else issues, e.g. PyTorch's own hooks) and
        time it from now to the completion of the future it returns. The observer is not
        told: ``launch`` may issue several collectives of unknown sizes."""
        start = self._launched()
        return self._time(launch(), start, None)

    # -- control collectives (blocking, counted apart) -----------------------------------
    def control_all_reduce(self, tensor: torch.Tensor, op: Any = dist.ReduceOp.SUM,
                           name: str = "control") -> torch.Tensor:
        """All-reduce ``tensor`` in place and wait; counted in :attr:`control`. A no-op
        without ``torch.distributed``."""
        if not self.distributed:
            return tensor
        self.control.add(tensor.numel() * tensor.element_size(), name)
        start = time.perf_counter()
        dist.all_reduce(tensor, op=op, group=self.process_group)
        self.control_seconds += time.perf_counter() - start
        return tensor

    def control_broadcast(self, tensor: torch.Tensor, name: str = "broadcast") -> torch.Tensor:
        """Broadcast ``tensor`` from the group's first rank, in place, and wait."""
        if not self.distributed:
            return tensor
        self.control.add(tensor.numel() * tensor.element_size(), name)
        group = self.process_group
        src = dist.get_global_rank(group, 0) if group is not None else 0
        start = time.perf_counter()
        dist.broadcast(tensor, src=src, group=group)
        self.control_seconds += time.perf_counter() - start
        return tensor

    def control_all_gather(self, output: torch.Tensor, tensor: torch.Tensor,
                           name: str = "control_gather") -> torch.Tensor:
        """All-gather ``tensor`` from every rank into ``output`` and wait; counted in
        :attr:`control` as the output's bytes. Without ``torch.distributed``, a copy."""
        if not self.distributed:
            return output.copy_(tensor.view_as(output))
        self.control.add(output.numel() * output.element_size(), name)
        start = time.perf_counter()
        dist.all_gather_into_tensor(output, tensor, group=self.process_group)
        self.control_seconds += time.perf_counter() - start
        return output

    def control_barrier(self, name: str = "barrier") -> None:
        """Wait for every rank of the group (no payload; its time is counted)."""
        if not self.distributed:
            return
        self.control.add(0, name)
        start = time.perf_counter()
        dist.barrier(group=self.process_group)
        self.control_seconds += time.perf_counter() - start

    # -- time --------------------------------------------------------------------------
    def _launched(self) -> float:
        """Note a collective in flight; its start time."""
        now = time.perf_counter()
        with self._lock:
            if self._in_flight == 0:
                self._busy_since = now
            self._in_flight += 1
        return now

    def _time(self, future: torch.futures.Future[T], start: float,
              nbytes: int | None) -> torch.futures.Future[T]:
        def record(_: torch.futures.Future[T]) -> None:
            end = time.perf_counter()
            seconds = end - start
            with self._lock:
                self.collective_seconds += seconds
                self._in_flight -= 1
                if self._in_flight == 0:
                    self.busy_seconds += end - self._busy_since
            if nbytes is not None and self.observer is not None:
                self.observer(nbytes, seconds)

        future.add_done_callback(record)
        return future

    def end_step(self) -> None:
        """Close one optimizer step (call on the bucket for which ``is_last()`` holds):
        from now until :meth:`note_backward_done` the step waits on collectives only."""
        self.payload.end_step()
        self._step_closed_at = time.perf_counter()
        if self._forward_started_at is not None:
            self.compute_samples.append(self._step_closed_at - self._forward_started_at)
            self._forward_started_at = None

    def note_forward_start(self) -> None:
        """The step's first training forward begins (``pactrain.attach``'s forward
        pre-hook): its compute is timed from here to the last bucket."""
        self._forward_started_at = time.perf_counter()

    def note_backward_done(self) -> None:
        """The backward pass returned (DDP waited for every bucket): count the time since
        the last bucket was handed over as exposed communication."""
        if self._step_closed_at is not None:
            self.exposed_seconds += time.perf_counter() - self._step_closed_at
            self._step_closed_at = None

    def _per_step(self, value: float) -> float | None:
        steps = self.payload.steps
        return value / steps if steps else None

    def seconds_per_step(self) -> float | None:
        """Busy seconds per completed step (``None`` before the first): overlapping
        collectives count once."""
        return self._per_step(self.busy_seconds)

    def collective_seconds_per_step(self) -> float | None:
        """Summed launch-to-completion seconds per step (overlaps counted in full)."""
        return self._per_step(self.collective_seconds)

    def exposed_seconds_per_step(self) -> float | None:
        """Seconds per step the step waited on collectives after its last bucket."""
        return self._per_step(self.exposed_seconds)

    def control_bytes_per_step(self) -> float | None:
        """Control bytes per completed step."""
        return self._per_step(self.control.total_bytes)

    def time_summary(self) -> dict[str, float | None]:
        """The JSON facts every method reports about its communication."""
        return {"comm_s_per_step": self.seconds_per_step(),
                "collective_s_per_step": self.collective_seconds_per_step(),
                "comm_exposed_s_per_step": self.exposed_seconds_per_step(),
                "control_bytes_per_step": self.control_bytes_per_step(),
                "control_s_per_step": self._per_step(self.control_seconds)}

    _COUNTERS = ("payload", "control", "collective_seconds", "busy_seconds",
                 "exposed_seconds", "control_seconds")

    def __getstate__(self) -> dict[str, Any]:
        """Counters only: a process group cannot be pickled, and the observer belongs to
        whoever made this communicator (it passes one again after unpickling)."""
        return {key: getattr(self, key) for key in self._COUNTERS}

    def __setstate__(self, state: dict[str, Any]) -> None:
        Communicator.__init__(self, None, None)  # counters only, in a subclass too
        for key in self._COUNTERS:
            if key in state:
                setattr(self, key, state[key])
        if "seconds" in state:      # written before busy and summed time were apart
            self.collective_seconds = state["seconds"]


class BucketSerializer:
    """Lets a bucket's collectives start only after the previous bucket's have finished.

    Costs some overlap between communication and the rest of the backward pass, and buys
    an identical collective order on every rank for hooks with chained collectives.
    """

    def __init__(self) -> None:
        self._pending: torch.futures.Future | None = None

    def before(self) -> None:
        """Call at the top of the hook: wait for the previous bucket."""
        if self._pending is not None:
            self._pending.wait()
            self._pending = None

    def after(self, fut: torch.futures.Future) -> torch.futures.Future:
        """Call with the hook's future before returning it."""
        self._pending = fut
        return fut

    def __getstate__(self) -> dict:
        return {}

    def __setstate__(self, state: dict) -> None:
        self._pending = None


class OrderedLauncher:
    """Launches each bucket's collectives once its prerequisite collective is complete,
    strictly in the order the buckets were added, on whichever thread completes them.

    Why: waiting in the hook for the agreed ternary scales (:func:`agree_scales`) stalls the
    backward pass behind the link's queue, where the small MAX waits for the previous
    bucket's codes: 19-31 ms a call, 0.06-0.09 s a step for a packed fashion-resnet18
    worker at 10 Mbit/s (3 buckets, 4 workers). Launching from the MAX's completion
    callback instead frees the backward pass, but gloo runs a group's collectives on
    several threads, so completions can come out of order, and gloo matches collectives
    by the order each rank issues them: bucket order must hold on every rank. Here a
    bucket whose prerequisite is done launches only after every earlier bucket launched.

    Each ``launch`` runs once, holding the launcher's lock (re-entrant: a launch whose
    future is already complete may complete the next bucket inline); what it raises
    becomes the bucket's future's error, which DDP raises at the end of the backward pass.
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._queue: deque[_Pending] = deque()

    def add(self, prerequisite: torch.futures.Future | None,
            launch: Callable[[], torch.futures.Future[T]],
            device: torch.device | None = None) -> torch.futures.Future[T]:
        """A future of what ``launch``'s future gives, launched after ``prerequisite``
        (``None``: nothing to wait for) and after every bucket added before."""
        cuda = device is not None and device.type == "cuda"
        pending = _Pending(launch, torch.futures.Future(devices=[device] if cuda else None))
        with self._lock:
            self._queue.append(pending)
        if prerequisite is None:
            self._ready(pending)
        else:
            prerequisite.add_done_callback(lambda _: self._ready(pending))
        return pending.result

    @property
    def waiting(self) -> int:
        """Buckets added and not launched yet."""
        return len(self._queue)

    def _ready(self, pending: _Pending) -> None:
        with self._lock:
            pending.ready = True
            while self._queue and self._queue[0].ready:
                head = self._queue.popleft()
                try:
                    future = head.launch()
                except Exception as error:  # the bucket's future carries it to DDP
                    head.result.set_exception(error)
                    continue
                future.add_done_callback(head.deliver)


class _Pending:
    """One bucket's launch waiting in an :class:`OrderedLauncher`."""

    __slots__ = ("launch", "ready", "result")

    def __init__(self, launch: Callable[[], torch.futures.Future],
                 result: torch.futures.Future) -> None:
        self.launch = launch
        self.result = result
        self.ready = False

    def deliver(self, done: torch.futures.Future) -> None:
        try:
            value = done.value()
        except Exception as error:
            self.result.set_exception(error)
            return
        self.result.set_result(value)
