"""What :func:`pactrain.attach` builds for a model wrapped with FSDP2's ``fully_shard``.

For each FSDP module that holds parameters: a :class:`~pactrain.fsdp.layout.ShardLayout`
and the module's two collectives (:mod:`pactrain.fsdp.collectives`), compacted for
``pactrain`` / ``pactrain-fp32`` and FSDP2's own (counted) for ``dense``, the reference
with the same pruning. A :class:`ShardedMethod` reports their bytes the way DDP methods do.

Which methods: compaction under FSDP2 is exact (fp32 or whatever dtype FSDP2's
``MixedPrecisionPolicy`` reduces and gathers in; that policy is FSDP2's own lossy tier and
composes with compaction). The DDP path's lossy tiers (ternary codes, sampling) sum codes
with an all-reduce; a reduce-scatter of codes with per-row scales is not built, and the
adaptive policy does not choose under FSDP2: ``pactrain`` compacts every module.
Baselines that replace DDP's all-reduce (PowerSGD, top-k, DGC, TernGrad, fp16) have no
FSDP2 form here and are refused by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch.distributed as dist
from torch import nn
from torch.distributed.fsdp import FSDPModule

from pactrain.compression.communicator import Communicator
from pactrain.fsdp.collectives import (
    CountedAllGather,
    CountedReduceScatter,
    MaskedAllGather,
    MaskedReduceScatter,
)
from pactrain.fsdp.layout import ShardedParam, ShardLayout
from pactrain.fsdp.sharded_pruning import ShardedPruner, local_of
from pactrain.fsdp.tracker import ShardedMaskTracker
from pactrain.pruning import PruningConfig
from pactrain.selection import Selector

#: Methods served under FSDP2 -> whether they compact.
FSDP_METHODS: dict[str, bool] = {"pactrain": True, "pactrain-fp32": True, "dense": False}


class FsdpError(ValueError):
    """This FSDP2 setup is not one PacTrain can serve (the message names the fix)."""


def is_fsdp(model: nn.Module) -> bool:
    """Whether ``model`` was wrapped with FSDP2's ``fully_shard``."""
    return isinstance(model, FSDPModule)


def _param_groups(module: FSDPModule) -> list[Any]:
    state = module._get_fsdp_state()  # torch 2.13: FSDPState of this module
    return list(getattr(state, "_fsdp_param_groups", []))


def fsdp_group(model: FSDPModule) -> dist.ProcessGroup:
    """The process group FSDP2 shards ``model`` over (a 1-D mesh only).

    Raises:
        FsdpError: a 2-D mesh (HSDP), whose replicate dimension all-reduces outside these
            comms.
    """
    for module in model.modules():
        if isinstance(module, FSDPModule):
            for group in _param_groups(module):
                info = group.mesh_info
                if getattr(info, "replicate_mesh_dim", None) is not None:
                    raise FsdpError("attach() serves FSDP2 on a 1-D mesh; an HSDP mesh "
                                    "(replicate x shard) is not supported yet")
                return info.shard_process_group
    raise FsdpError("the fully_shard-ed model holds no parameters")


def shard_layouts(model: nn.Module, rank: int, world_size: int
                  ) -> list[tuple[FSDPModule, ShardLayout]]:
    """One layout per FSDP module that manages parameters, in module order.

    Raises:
        FsdpError: a module with several parameter groups, or a parameter sharded on
            another dim than 0 (its collectives reorder rows; not compacted here).
    """
    layouts = []
    for module in model.modules():
        if not isinstance(module, FSDPModule):
            continue
        groups = _param_groups(module)
        if not groups:
            continue
        if len(groups) > 1:
            raise FsdpError(f"{type(module).__name__} has {len(groups)} FSDP parameter "
                            "groups (a per-parameter mesh); PacTrain serves one per module")
        entries = []
        for fsdp_param in groups[0].fsdp_params:
            if fsdp_param.fsdp_placement.dim != 0:
                raise FsdpError("PacTrain compacts parameters sharded on dim 0 (fully_shard's "
                                f"default), not {fsdp_param.fsdp_placement}; drop "
                                "shard_placement_fn")
            entries.append(ShardedParam(fsdp_param.sharded_param,
                                        fsdp_param.padded_sharded_param_size.numel(),
                                        local_of(fsdp_param.sharded_param).numel()))
        layouts.append((module, ShardLayout(entries, world_size, rank)))
    return layouts


@dataclass
class ShardedState:
    """What :func:`pactrain.methods.method_communicator` looks for: the communicator."""

    comm: Communicator


class ShardedMethod:
    """The communication method of an FSDP2 run: its collectives' bytes and time.

    Attributes:
        state: holds the communicator every collective goes through.
        compact: whether the collectives carry kept entries only.
        layouts: the FSDP modules' layouts.
    """

    def __init__(self, comm: Communicator, compact: bool, layouts: list[ShardLayout]) -> None:
        self.state = ShardedState(comm)
        self.compact = compact
        self.layouts = layouts

    @property
    def payload(self) -> Any:
        return self.state.comm.payload

    def on_step_end(self, step: int) -> None:
        """Close the step's payload count (FSDP2 has no last bucket to close it)."""
        self.state.comm.end_step()

    def reduce_scatter_share(self) -> float:
        """Entries the compacted reduce-scatters carry over FSDP2's own (rows padded to the
        widest; 1.0 without compaction)."""
        if not self.compact:
            return 1.0
        full = sum(layout.world_size * layout.chunk for layout in self.layouts)
        sent = sum(layout.world_size * layout.width for layout in self.layouts)
        return sent / full if full else 1.0

    def all_gather_share(self) -> float:
        """Entries the compacted all-gathers carry over FSDP2's own (uneven rows, kept
        entries only; 1.0 without compaction)."""
        if not self.compact:
            return 1.0
        full = sum(layout.world_size * layout.chunk for layout in self.layouts)
        kept = sum(sum(layout.kept_per_row) for layout in self.layouts)
        return kept / full if full else 1.0

    def summary(self) -> dict[str, Any]:
        payload = self.state.comm.payload
        steps = max(payload.steps, 1)
        return {"fsdp": True, "compacted": self.compact, "fsdp_modules": len(self.layouts),
                "reduce_scatter_share": self.reduce_scatter_share(),
                "all_gather_share": self.all_gather_share(),
                "bytes_per_step_by_collective": {name: count / steps for name, count
                                                 in sorted(payload.by_collective.items())},
                **self.state.comm.time_summary()}


def build_sharded(model: nn.Module, group: dist.ProcessGroup, method: str,
                  pruning: PruningConfig | None, prune: Selector
                  ) -> tuple[ShardedMaskTracker | None, ShardedMethod]:
    """Masks, layouts and collectives for ``model`` under ``method``.

    Raises:
        FsdpError: a method without an FSDP2 form, or a layout this cannot serve.
    """
    if method not in FSDP_METHODS:
        raise FsdpError(f"method {method!r} has no FSDP2 form; under fully_shard use "
                        f"{', '.join(FSDP_METHODS)} (the others replace DDP's all-reduce)")
    rank, world_size = dist.get_rank(group), dist.get_world_size(group)
    comm = Communicator(group)
    modules = shard_layouts(model, rank, world_size)
    layouts = [layout for _, layout in modules]
    compact = FSDP_METHODS[method]
    for module, layout in modules:
        if compact:
            module.set_custom_reduce_scatter(MaskedReduceScatter(comm, layout))
            module.set_custom_all_gather(MaskedAllGather(comm, layout))
        else:
            module.set_custom_reduce_scatter(CountedReduceScatter(comm))
            module.set_custom_all_gather(CountedAllGather(comm))
    tracker = None
    if pruning is not None:
        pruner = ShardedPruner(model, pruning, prune, comm, rank, world_size)
        tracker = ShardedMaskTracker(pruner, group, layouts)
        tracker.rebuild_layouts()
    elif compact:
        raise FsdpError(f"{method} compacts by the pruning masks and needs pruning on")
    return tracker, ShardedMethod(comm, compact, layouts)
