"""Gradual pruning of a sharded model: masks from statistics the ranks agree on, kept with
each rank's shard.

Under FSDP2 no rank holds a whole weight matrix between steps; gathering each one to rank
it would move the model at every mask update. The ranking PacTrain uses (LAMP over all
prunable layers, :mod:`pactrain.pruning`) needs two things, and both can be agreed on with
small collectives:

1. **How many weights each layer loses** (LAMP's layerwise allocation). Each rank bins its
   live |w| by their float32 bit pattern, eight bins an octave (the exponent and the top three
   mantissa bits, so a bin spans 1/8 of an octave); counts and sums of squares per bin and
   layer are all-reduced over the bins that some rank uses. From these per-layer histograms
   every rank computes the same LAMP allocation (a bin stands for its count of weights, scored
   by its mean square over the squares of its layer at or above it), with
   :func:`pactrain.pruning.allocate_lowest`, the function the unsharded pruner uses.
2. **Which weights of the layer those are**: its smallest |w| over all shards, ties pruned in
   flat order (the unsharded pruner's rule). A bisection over float32 bit patterns finds the
   threshold value: each round all-reduces, per layer, the count of live weights at or below
   the midpoint (31 rounds of a few integers). The weights at the threshold are then
   handed out in rank order, which is flat order for dim-0 shards, from the all-reduced tie
   counts per rank.

The mask is exact for the allocation (the layer loses exactly its smallest weights, as the
unsharded pruner's ``_keep_mask`` would choose from the full tensor), and the allocation is
LAMP's up to the bin width (the unsharded pruner scores a strided sample instead, so the
two may differ by a few weights per layer). Global |w| ranking is the same bisection over
all layers as one pool; per-layer ranking is one pool per layer with its own count.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn

from pactrain.compression.communicator import Communicator
from pactrain.pruning import GradualPruner, PruningConfig, allocate_lowest, lamp_scores
from pactrain.selection import Selector

#: Mantissa bits kept in a histogram bin's index (2**3 = 8 bins an octave).
BIN_MANTISSA_BITS = 3
#: float32 +inf's bit pattern: every finite |w| is at or below it.
_INF_BITS = 0x7F800000


def local_of(tensor: torch.Tensor) -> torch.Tensor:
    """This rank's shard of a ``DTensor`` (the same storage), or the tensor itself."""
    to_local = getattr(tensor, "to_local", None)
    return to_local() if to_local is not None else tensor


def magnitude_bits(values: torch.Tensor) -> torch.Tensor:
    """|values| as float32 bit patterns (int64): ordered as the magnitudes are."""
    return values.detach().float().abs().view(torch.int32).long()


class ShardedPruner(GradualPruner):
    """:class:`~pactrain.pruning.GradualPruner` for a model whose parameters are dim-0
    sharded ``DTensor``\\ s: ``masks`` hold this rank's shard of each mask.

    Args:
        model: the ``fully_shard``-ed model.
        config: the schedule.
        select: which parameters to prune (:func:`pactrain.selection.select_prunable`).
        comm: the communicator its agreements go through (control traffic).
        rank, world_size: this rank's place in the FSDP group (rank order is flat order).
    """

    def __init__(self, model: nn.Module, config: PruningConfig, select: Selector,
                 comm: Communicator, rank: int, world_size: int) -> None:
        super().__init__(model, config, select)
        self.comm = comm
        self.rank = rank
        self.world_size = world_size
        self.masks = {name: torch.ones_like(local_of(p), dtype=torch.bool)
                      for name, p in self.params.items()}
        #: pruned weights per layer over all shards (the same on every rank)
        self.pruned_total: dict[str, int] = {name: 0 for name in self.params}
        self.numel_total: dict[str, int] = {name: p.numel() for name, p in self.params.items()}
        self._name_of = {id(p): name for name, p in self.params.items()}

    # -- the update ----------------------------------------------------------------------
    @torch.no_grad()
    def update_masks(self, sparsity: float) -> bool:
        """Prune the smallest-ranking weights over all shards up to ``sparsity``; return
        whether any layer lost weights (the same answer on every rank)."""
        self.sparsity = sparsity
        names = list(self.params)
        before = self._agreed_pruned(names)
        total = sum(self.numel_total.values())
        target = math.floor(sparsity * total)
        scope = self.config.scope
        # this shard's live weights, and their magnitudes as bit patterns: read once for
        # both the allocation and the selection
        live = {name: local_of(self.params[name]).flatten()[self.masks[name].flatten()]
                for name in names}
        bits = {name: magnitude_bits(values) for name, values in live.items()}
        if scope == "lamp":
            allocation = self._lamp_allocation(names, before, target, live, bits)
            pools = [([name], allocation[name] - before[name]) for name in names]
        elif scope == "layer":
            pools = [([name], math.floor(sparsity * self.numel_total[name]) - before[name])
                     for name in names]
        else:
            pools = [(names, target - sum(before.values()))]
        pools = [(members, need) for members, need in pools if need > 0]
        if not pools:
            self.pruned_total = before
            return False
        self._prune_smallest(pools, bits)
        after = self._agreed_pruned(names)
        self.pruned_total = after
        return after != before

    def _agreed_pruned(self, names: list[str]) -> dict[str, int]:
        """Pruned weights per layer over all shards (one all-reduce)."""
        local = GradualPruner.pruned_counts(self)  # this shard's
        counts = torch.tensor([local[n] for n in names], dtype=torch.int64)
        self.comm.control_all_reduce(counts, name="prune_counts")
        return {name: int(count) for name, count in zip(names, counts, strict=True)}

    def _lamp_allocation(self, names: list[str], before: dict[str, int], target: int,
                         live: dict[str, torch.Tensor], bits: dict[str, torch.Tensor],
                         ) -> dict[str, int]:
        """Pruned weights per layer after this update: LAMP's allocation over the agreed
        per-layer histograms (module docstring, step 1). ``live``: this shard's live
        weights per layer; ``bits``: their :func:`magnitude_bits`."""
        to_prune = target - sum(before.values())
        if to_prune <= 0:
            return dict(before)
        shift = 23 - BIN_MANTISSA_BITS
        bins = {name: bits[name] >> shift for name in names}
        span = torch.tensor([[-(int(b.min()) if b.numel() else 1 << 30),
                              int(b.max()) if b.numel() else -1] for b in bins.values()],
                            dtype=torch.int64)
        self.comm.control_all_reduce(span, op=torch.distributed.ReduceOp.MAX,
                                     name="prune_bins")
        lows, highs = (-span[:, 0]).tolist(), span[:, 1].tolist()
        widths = [max(0, high - low + 1) for low, high in zip(lows, highs, strict=True)]
        counts = torch.zeros(sum(widths), dtype=torch.float64)
        squares = torch.zeros(sum(widths), dtype=torch.float64)
        offset = 0
        for name, low, width in zip(names, lows, widths, strict=True):
            if width:
                where = bins[name] - low + offset
                counts.index_add_(0, where, torch.ones_like(where, dtype=torch.float64))
                squares.index_add_(0, where, live[name].double().square())
            offset += width
        stats = torch.cat([counts, squares])
        self.comm.control_all_reduce(stats, name="prune_histogram")
        counts, squares = stats[:counts.numel()], stats[counts.numel():]
        scores, capacity, offset = [], [], 0
        for width in widths:
            c, s = counts[offset:offset + width], squares[offset:offset + width]
            used = c > 0
            c, s = c[used], s[used]
            scores.append(lamp_scores(s / c.clamp_min(1.0), s.flip(0).cumsum(0).flip(0)))
            capacity.append(c)
            offset += width
        added = allocate_lowest(scores, capacity, to_prune)
        return {name: before[name] + round(count) for name, count in zip(names, added, strict=True)}

    def _prune_smallest(self, pools: list[tuple[list[str], int]],
                        live: dict[str, torch.Tensor]) -> None:
        """In each pool (layers ranked together), prune its ``need`` smallest live |w| over
        all shards (``live``: this shard's live magnitudes as :func:`magnitude_bits`); ties
        in flat order: layer by layer, rank by rank, then local order (module docstring,
        step 2)."""
        need = torch.tensor([n for _, n in pools], dtype=torch.int64)
        low = torch.zeros(len(pools), dtype=torch.int64)
        high = torch.full((len(pools),), _INF_BITS, dtype=torch.int64)
        while bool((low < high).any()):
            middle = (low + high) // 2
            at_or_below = torch.tensor(
                [sum(int((live[name] <= int(m)).sum()) for name in members)
                 for (members, _), m in zip(pools, middle, strict=True)], dtype=torch.int64)
            self.comm.control_all_reduce(at_or_below, name="prune_threshold")
            enough = at_or_below >= need
            high = torch.where(enough, middle, high)
            low = torch.where(enough, low, middle + 1)
        threshold = high
        names = [name for members, _ in pools for name in members]
        ties = torch.zeros(len(names) * self.world_size + len(pools), dtype=torch.int64)
        row = 0
        for pool_index, (members, _) in enumerate(pools):
            t = int(threshold[pool_index])
            for name in members:
                ties[row * self.world_size + self.rank] = int((live[name] == t).sum())
                ties[len(names) * self.world_size + pool_index] += int((live[name] < t).sum())
                row += 1
        self.comm.control_all_reduce(ties, name="prune_ties")
        per_rank = ties[:len(names) * self.world_size].view(len(names), self.world_size)
        below = ties[len(names) * self.world_size:]
        row = 0
        for pool_index, (members, pool_need) in enumerate(pools):
            t = int(threshold[pool_index])
            left = pool_need - int(below[pool_index])  # ties still to prune in this pool
            for name in members:
                before_me = int(per_rank[row, :self.rank].sum())
                quota = min(max(left - before_me, 0), int(per_rank[row, self.rank]))
                left -= int(per_rank[row].sum())
                self._prune_local(name, live[name], t, quota)
                row += 1

    def _prune_local(self, name: str, live_bits: torch.Tensor, threshold: int,
                     ties_to_prune: int) -> None:
        """Prune this shard's live weights below ``threshold`` and its first
        ``ties_to_prune`` at it."""
        drop = live_bits < threshold
        if ties_to_prune > 0:
            tied = (live_bits == threshold).nonzero().squeeze(1)[:ties_to_prune]
            drop[tied] = True
        mask = self.masks[name].flatten().clone()
        positions = mask.nonzero().squeeze(1)
        mask[positions[drop]] = False
        self.masks[name] = mask.view_as(self.masks[name])

    # -- enforcement ---------------------------------------------------------------------
    @torch.no_grad()
    def apply(self, optimizer: torch.optim.Optimizer | None = None) -> None:
        """Zero pruned entries of this rank's shards and of optimizer state shaped like them."""
        for name, p in self.params.items():
            keep = self.masks[name]
            local_of(p).mul_(keep)
            if optimizer is not None:
                for value in optimizer.state.get(p, {}).values():
                    if torch.is_tensor(value) and value.shape == p.shape:
                        local_of(value).mul_(keep)

    @torch.no_grad()
    def mask_gradients(self) -> None:
        """Zero this rank's gradient shards at pruned positions."""
        for name, p in self.params.items():
            if p.grad is not None:
                local_of(p.grad).mul_(self.masks[name])

    # -- facts ---------------------------------------------------------------------------
    def density(self) -> float:
        """Fraction of prunable weights kept, over all shards (no collective: the counts
        were agreed at the last update)."""
        total = sum(self.numel_total.values())
        return 1.0 - sum(self.pruned_total.values()) / total

    def model_density(self) -> float:
        return 1.0 - sum(self.pruned_total.values()) / self.total_params

    def pruned_counts(self) -> dict[str, int]:
        return dict(self.pruned_total)

    def mask_of(self, param: nn.Parameter) -> torch.Tensor | None:
        """This rank's mask shard of ``param`` (``None``: the parameter is not pruned)."""
        name = self._name_of.get(id(param))
        return None if name is None else self.masks[name]

    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "pruned_total": dict(self.pruned_total)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        for name, mask in state["masks"].items():
            if name in self.masks and mask.shape != self.masks[name].shape:
                raise ValueError(
                    f"checkpoint mask {name} has shape {tuple(mask.shape)}, this rank's shard "
                    f"has {tuple(self.masks[name].shape)}; resume with the same world size "
                    "and each rank's own state")
        super().load_state_dict(state)
        self.pruned_total = {name: int(n) for name, n in state["pruned_total"].items()}
