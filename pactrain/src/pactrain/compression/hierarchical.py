"""A communicator whose all-reduce is two-level: inside each node, then across nodes.

Why: real clusters are two-level. Workers inside a machine talk over a fast bus; machines
talk over Ethernet, often 10-100x slower. A flat ring all-reduce over N workers on M nodes
sends 2(N-1)/N of the buffer over every ring link, and the links that cross nodes carry it
for every worker of the node that sits next to them; a hierarchical all-reduce sends one
buffer per node across: reduce to the node's leader over the fast bus, all-reduce among the
M leaders (2(M-1)/M of the buffer on each uplink), broadcast inside the node. On 2 nodes x
2 workers, 1.0 buffer instead of 1.5 crosses each uplink each way.

Every method built on :class:`pactrain.compression.communicator.Communicator` gets the
hierarchy by being given this one instead: PacTrain's tiers compact (and, lossy, encode)
before the all-reduce, so what crosses the nodes is the compacted buffer and nothing is
encoded twice.

Ordering: the three collectives of one all-reduce run on two kinds of groups (the node's,
the leaders'), and gloo matches collectives by the order each rank issues them on a group.
So one thread per rank issues every hierarchical all-reduce, in the order they were handed
over (a FIFO): the hook never waits, buckets overlap the backward pass as with the flat
communicator, and every rank issues the same sequence on every group.

Node layout: ranks are numbered node by node, ``W`` workers a node (torchrun's
``LOCAL_WORLD_SIZE``; ranks ``k x W`` to ``(k+1) x W - 1`` on node ``k``).
"""

from __future__ import annotations

import queue
import threading
from typing import Any

import torch
import torch.distributed as dist

from pactrain.accounting import PayloadCounter
from pactrain.compression.communicator import Communicator, Observer


class _Hierarchy:
    """One channel of two-level all-reduces: a group per node, the leaders' group, and the
    thread that issues them in the order they were queued."""

    def __init__(self, ranks: list[int], own: int, workers_per_node: int) -> None:
        self.workers_per_node = workers_per_node
        self.nodes = len(ranks) // workers_per_node
        groups = [dist.new_group(ranks[k * workers_per_node:(k + 1) * workers_per_node])
                  for k in range(self.nodes)]
        leaders = ranks[::workers_per_node]
        leader_group = dist.new_group(leaders)
        node = own // workers_per_node
        self.node_group = groups[node]
        self.leader = leaders[node]
        self.leads = own % workers_per_node == 0
        self.leader_group = leader_group if self.leads else None
        self.jobs: queue.Queue[tuple[torch.Tensor, Any, torch.futures.Future] | None] = \
            queue.Queue()
        threading.Thread(target=self._issue, name="pactrain-hierarchy", daemon=True).start()

    def _issue(self) -> None:
        """The issuing thread: each queued all-reduce, whole, in order."""
        while True:
            job = self.jobs.get()
            if job is None:
                return
            tensor, op, future = job
            try:
                if self.workers_per_node > 1:
                    dist.reduce(tensor, dst=self.leader, op=op, group=self.node_group)
                if self.leader_group is not None and self.nodes > 1:
                    dist.all_reduce(tensor, op=op, group=self.leader_group)
                if self.workers_per_node > 1:
                    dist.broadcast(tensor, src=self.leader, group=self.node_group)
            except BaseException as exc:  # the hook's future carries it to DDP
                future.set_exception(exc)
            else:
                future.set_result([tensor])


class HierarchicalCommunicator(Communicator):
    """:class:`Communicator` with a two-level :meth:`all_reduce` (module docstring).

    Collective to build (every rank creates every node's group and the leaders' group, in
    the same order, as ``dist.new_group`` requires).

    Args:
        process_group: the whole group (``None``: the default group).
        workers_per_node: ranks per node; must divide the group's size.
        observer: as for :class:`Communicator`.
        apart: other groups over the same ranks that callers pass as ``group`` to keep
            their all-reduces apart (PacTrain's group of the ternary scales): each gets its
            own channel (groups and issuing thread), so that an all-reduce queued from a
            future's callback on one channel never reorders those of another.

    Attributes:
        cross_node: bytes this rank handed to the all-reduce among leaders (zero on ranks
            that lead no node): what crosses the slow links.
    """

    def __init__(self, process_group: Any, workers_per_node: int,
                 observer: Observer | None = None, apart: tuple[Any, ...] = ()) -> None:
        super().__init__(process_group, observer)
        world = dist.get_world_size(process_group)
        if workers_per_node < 1 or world % workers_per_node:
            raise ValueError(f"{world} workers do not split into nodes of {workers_per_node}")
        ranks = (dist.get_process_group_ranks(process_group) if process_group is not None
                 else list(range(world)))
        own = dist.get_rank(process_group)
        self.workers_per_node = workers_per_node
        self.nodes = world // workers_per_node
        self._channels = {id(group): _Hierarchy(ranks, own, workers_per_node)
                          for group in (process_group, *[g for g in apart if g is not None])}
        main = self._channels[id(process_group)]
        self.leader = main.leader
        self.leads = main.leads
        self.cross_node = PayloadCounter()

    def all_reduce(self, tensor: torch.Tensor, name: str = "all_reduce",
                   op: Any = dist.ReduceOp.SUM, group: Any = None,
                   ) -> torch.futures.Future[list[torch.Tensor]]:
        """Queue one hierarchical all-reduce of ``tensor`` in place, on ``group``'s channel
        (``None``: the main one); the future's value is ``[tensor]``.

        Raises:
            ValueError: a ``group`` that was not given as ``apart``.
        """
        channel = self._channels.get(id(group if group is not None else self.process_group))
        if channel is None:
            raise ValueError("an all-reduce on a group the hierarchical communicator was not "
                             "built with (pass it as apart=...)")
        nbytes = tensor.numel() * tensor.element_size()
        with self._lock:
            self.payload.add(nbytes, name)
            if self.leads and self.nodes > 1:
                self.cross_node.add(nbytes, name)
        start = self._launched()
        future: torch.futures.Future[list[torch.Tensor]] = torch.futures.Future()
        channel.jobs.put((tensor, op, future))
        return self._time(future, start, nbytes)

    def time_summary(self) -> dict[str, Any]:
        """:meth:`Communicator.time_summary` and the hierarchy: workers per node, and the
        bytes per step this rank handed to the all-reduce across nodes."""
        steps = self.payload.steps
        return {**super().time_summary(), "workers_per_node": self.workers_per_node,
                "cross_node_bytes_per_step":
                    self.cross_node.total_bytes / steps if steps else None}

    def close(self) -> None:
        """Stop the issuing threads once the queued all-reduces are issued."""
        for channel in self._channels.values():
            channel.jobs.put(None)
