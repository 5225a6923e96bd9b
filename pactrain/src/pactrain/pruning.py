"""Gradual magnitude pruning (Zhu and Gupta, 2017) of weight matrices.

Which parameters are pruned is :mod:`pactrain.selection`'s job (linear and conv weights,
attention projections, Hugging Face ``Conv1D``, a user's own 2-D projections; embeddings,
norms and biases stay dense; or an explicit ``select``).

Why gradual: pruning 80% of the weights at once costs accuracy that training cannot win
back; raising the sparsity along a cubic curve lets the network adapt while most of the
communication saving already arrives early.

Target sparsity at step t (t0 = start, t1 = end, s_i initial, s_f final)::

    s_t = s_f + (s_i - s_f) * (1 - (t - t0) / (t1 - t0)) ** 3      for t0 <= t <= t1

Masks change only on update steps (t0, t0 + frequency, ..., and t1). Ranking (``scope``) is
by |w| globally over all prunable weights, by |w| within each layer, or by LAMP scores
globally (Lee et al., "Layer-adaptive sparsity for the magnitude-based pruning", ICLR 2021:
a weight's w^2 over the sum of w^2 of the weights of its layer at least as large), with a
deterministic tie-break (among equal scores the lower flat index is pruned first), so ranks
that hold the same weights derive the same masks without talking.

Why LAMP: a global |w| ranking compares layers on their initialisation scale. Hugging Face's
GPT-2 initialises every residual output projection (``c_proj``) at 0.02 / sqrt(2 x layers)
instead of 0.02, so global magnitude pruning at 80% keeps 0.6% of those projections and 34%
of the others (measured on the byte-level config): it nearly cuts each block's write to the
residual stream. A per-layer ranking avoids that but prunes a 288-weight first convolution as
hard as a 3.2 M-weight linear layer. LAMP's score is invariant to a layer's scale and keeps
small layers denser, and its authors (arXiv:2010.07611) report it outperforming the usual
layerwise sparsities (global, uniform, ERK) under various image classification setups.

Once pruned, a weight stays pruned. Pruned weights and their optimizer state (momentum,
Adam moments) are zeroed, and gradients at pruned positions are zeroed before the optimizer
sees them, so weight decay cannot revive them.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
from torch import nn

from pactrain.compression.compressors import mask_multiplier
from pactrain.names import PRUNE_SCOPES
from pactrain.selection import Selector, select_prunable

#: Live weights per layer above which LAMP's allocation is scored on a strided sample
#: (:meth:`GradualPruner._lamp_prune_counts`).
LAMP_SAMPLE = 1 << 16


def lamp_scores(squares: torch.Tensor, tail: torch.Tensor) -> torch.Tensor:
    """LAMP's score of weights whose squares are ``squares`` (ascending) and whose layer's
    squares at least as large sum to ``tail`` (Lee et al. 2021, eq. 1)."""
    return squares / tail.clamp_min(torch.finfo(torch.float64).tiny)


def allocate_lowest(scores: list[torch.Tensor], capacity: list[torch.Tensor],
                    to_prune: int) -> list[float]:
    """How many weights of each layer are among the ``to_prune`` lowest-scoring ones.

    Each layer ``i`` is given as items (``scores[i]``, ascending within the layer), each
    item standing for ``capacity[i]`` weights (a strided sample's stride, or a histogram
    bin's count). The items of all layers are ranked by score (stable: equal scores keep
    layer order) and taken from the lowest until ``to_prune`` weights are; the item that
    reaches it is taken in part. Deterministic for equal inputs, so ranks that agree on the
    items agree on the allocation without talking.
    """
    if not scores:
        return []
    owner = torch.cat([torch.full(s.shape, index, dtype=torch.long, device=s.device)
                       for index, s in enumerate(scores)])
    order = torch.sort(torch.cat(scores), stable=True).indices
    capacity_sorted = torch.cat(capacity)[order]
    owner_sorted = owner[order]
    reached = capacity_sorted.cumsum(0)
    last = int(torch.searchsorted(reached, float(to_prune)))  # the item that reaches it
    last = min(last, reached.numel() - 1)
    taken = capacity_sorted[:last + 1].clone()
    taken[-1] -= float(reached[last]) - to_prune
    per_layer = torch.zeros(len(scores), dtype=torch.float64,
                            device=taken.device).index_add_(0, owner_sorted[:last + 1], taken)
    return [float(count) for count in per_layer]


class NothingToPruneError(ValueError):
    """The model has no trainable weight matrix to prune (or none the selector names)."""


@dataclass(frozen=True)
class PruningConfig:
    """Schedule of gradual magnitude pruning.

    Attributes:
        final_sparsity: fraction of prunable weights that are zero at and after ``end_step``.
        start_step: first mask update (t0).
        end_step: last mask update (t1); the final sparsity holds from here on.
        frequency: steps between mask updates.
        initial_sparsity: sparsity at ``start_step`` (s_i).
        scope: ``"lamp"`` (one ranking of LAMP scores over all prunable weights),
            ``"global"`` (one ranking of |w|) or ``"layer"`` (|w| within each layer).
    """

    final_sparsity: float = 0.8
    start_step: int = 0
    end_step: int = 100
    frequency: int = 10
    initial_sparsity: float = 0.0
    scope: str = "lamp"

    def __post_init__(self) -> None:
        if not 0.0 <= self.initial_sparsity <= self.final_sparsity < 1.0:
            raise ValueError(
                "need 0 <= initial_sparsity <= final_sparsity < 1, got "
                f"{self.initial_sparsity} and {self.final_sparsity}"
            )
        if self.end_step < self.start_step or self.frequency < 1:
            raise ValueError(
                f"need start_step <= end_step and frequency >= 1, got {self.start_step}, "
                f"{self.end_step}, {self.frequency}"
            )
        if self.scope not in PRUNE_SCOPES:
            raise ValueError(f"scope must be one of {', '.join(PRUNE_SCOPES)}, "
                             f"got {self.scope!r}")

    @classmethod
    def for_run(cls, steps: int, final_sparsity: float, scope: str = "lamp",
                start: float = 0.1, end: float = 0.6,
                frequency: int | None = None, initial: float = 0.0) -> PruningConfig:
        """A schedule that prunes from ``start`` to ``end`` (fractions) of a run of
        ``steps`` steps, every ``frequency`` steps (``None``: about 10 updates), from
        ``initial`` sparsity at ``start`` (s_i) to ``final_sparsity``."""
        first = int(start * steps)
        last = max(first, int(end * steps))
        return cls(final_sparsity=final_sparsity, start_step=first, end_step=last,
                   frequency=frequency or max(1, (last - first) // 10),
                   initial_sparsity=initial, scope=scope)

    def target_sparsity(self, step: int) -> float:
        """s_t of the cubic schedule (clamped before t0 and after t1)."""
        if step < self.start_step:
            return 0.0 if self.initial_sparsity == 0.0 else self.initial_sparsity
        if step >= self.end_step or self.end_step == self.start_step:
            return self.final_sparsity
        progress = (step - self.start_step) / (self.end_step - self.start_step)
        return self.final_sparsity + (self.initial_sparsity - self.final_sparsity) * (
            1.0 - progress) ** 3

    def is_update_step(self, step: int) -> bool:
        """Whether masks are recomputed before step ``step``."""
        if step < self.start_step or step > self.end_step:
            return False
        return (step - self.start_step) % self.frequency == 0 or step == self.end_step


class GradualPruner:
    """Owns the masks of one model and keeps weights, gradients and optimizer state masked.

    Args:
        model: the module (not the DDP wrapper; its parameters are the same objects).
        config: the schedule.
        select: which parameters to prune (:func:`pactrain.selection.select_prunable`;
            ``None``: the default rule).

    Raises:
        NothingToPruneError: nothing trainable is selected.
        SelectionError: a malformed selector or a pattern that matches nothing.
    """

    def __init__(self, model: nn.Module, config: PruningConfig,
                 select: Selector = None) -> None:
        self.config = config
        self.selection = select_prunable(model, select)
        self.params: dict[str, nn.Parameter] = self.selection.params
        #: names under which an already listed (tied) weight appears again
        self.aliases: dict[str, str] = self.selection.aliases
        self.frozen: list[str] = self.selection.frozen
        if not self.params:
            raise NothingToPruneError(
                f"{type(model).__name__} has no trainable weight matrix to prune"
                + (" matching prune=" + repr(select) if select is not None else "")
                + (f" ({len(self.frozen)} frozen ones are left alone)" if self.frozen else "")
                + "; use a method without pruning (e.g. a baseline) or add prunable layers"
            )
        self.masks: dict[str, torch.Tensor] = {
            name: torch.ones_like(p, dtype=torch.bool) for name, p in self.params.items()
        }
        self.sparsity = 0.0
        self.last_update_step = -1
        self.total_params = sum(p.numel() for p in model.parameters())

    # -- schedule ------------------------------------------------------------------------
    def maybe_update(self, step: int) -> bool:
        """Recompute masks if ``step`` is an update step; return whether any mask changed."""
        if not self.config.is_update_step(step) or step == self.last_update_step:
            return False
        self.last_update_step = step
        return self.update_masks(self.config.target_sparsity(step))

    @torch.no_grad()
    def update_masks(self, sparsity: float) -> bool:
        """Prune the smallest-scoring weights up to ``sparsity``; return whether masks changed.

        Already pruned weights rank below every live weight, so masks only shrink.
        """
        self.sparsity = sparsity
        total = sum(m.numel() for m in self.masks.values())
        if self.config.scope == "lamp":
            counts = self._lamp_prune_counts(math.floor(sparsity * total))
            new_masks = {name: self._keep_mask(self._scores(name).flatten(), counts[name])
                         for name in self.masks}
        elif self.config.scope == "global":
            scores = torch.cat([self._scores(n).flatten() for n in self.params])
            keep = self._keep_mask(scores, math.floor(sparsity * total))
            new_masks, offset = {}, 0
            for name, mask in self.masks.items():
                new_masks[name] = keep[offset:offset + mask.numel()]
                offset += mask.numel()
        else:
            new_masks = {name: self._keep_mask(self._scores(name).flatten(),
                                               math.floor(sparsity * mask.numel()))
                         for name, mask in self.masks.items()}
        changed = False
        for name, mask in self.masks.items():
            new = new_masks[name].view_as(mask)
            changed |= not torch.equal(new, mask)
            self.masks[name] = new
        return changed

    def _scores(self, name: str) -> torch.Tensor:
        score = self.params[name].detach().abs().float()
        return torch.where(self.masks[name], score, torch.full_like(score, -1.0))

    def _lamp_prune_counts(self, n_prune: int) -> dict[str, int]:
        """How many weights each layer holds pruned after this update, so that the model
        holds ``n_prune``: LAMP's layerwise allocation (within a layer LAMP prunes the
        smallest |w|, which :meth:`_keep_mask` then does).

        A live weight u's LAMP score is w_u^2 / (sum of w_v^2 over the live weights v of
        its layer with |w_v| >= |w_u|). Sorting a layer of 3.2 M weights for it cost 0.7 s
        per mask update on one core here (four workers on two cores: 1.5 s, 9 s over a
        race's first 50 steps); so a layer with more than :data:`LAMP_SAMPLE` live weights
        is scored on every s-th of them in flat order (s = ceil(live / LAMP_SAMPLE)), each
        sampled weight standing for s weights and its tail sum taken as s times the
        sample's. Layers at or under the sample size are scored exactly. The allocation is
        then exact in total (``n_prune``) and deterministic on every rank.
        """
        pruned = self.pruned_counts()
        to_prune = n_prune - sum(pruned.values())
        if to_prune <= 0:
            return pruned
        scores, capacity = [], []
        for name, mask in self.masks.items():
            live = self.params[name].detach().flatten()[mask.flatten()]
            stride = max(1, -(-live.numel() // LAMP_SAMPLE))
            squares = torch.sort(live[::stride].double().square(), stable=True).values
            tail = squares.flip(0).cumsum(0).flip(0)
            scores.append(lamp_scores(squares, stride * tail))
            share = torch.full_like(squares, float(stride))
            if share.numel():
                share[-1] = live.numel() - stride * (squares.numel() - 1)  # the largest
            capacity.append(share)
        added = allocate_lowest(scores, capacity, to_prune)
        return {name: pruned[name] + round(added[index])
                for index, name in enumerate(self.masks)}

    @staticmethod
    def _keep_mask(scores: torch.Tensor, n_prune: int) -> torch.Tensor:
        """Keep all but the ``n_prune`` lowest scores; among equal scores the lower flat
        index is pruned first (what a stable sort would give).

        Why not a stable ``argsort``: on resnet18's 11.7 M weights it took seconds per mask
        update on one thread, and an early schedule updates every step. The k-th smallest
        score (``kthvalue``, linear time) splits the weights into those strictly below it
        (all pruned) and the ties at it (pruned in index order until k are), which is the
        same set in O(n).
        """
        keep = torch.ones(scores.numel(), dtype=torch.bool, device=scores.device)
        if n_prune <= 0:
            return keep
        threshold = torch.kthvalue(scores, n_prune).values
        below = scores < threshold
        keep[below] = False
        ties = (scores == threshold).nonzero().squeeze(1)
        keep[ties[:n_prune - int(below.sum())]] = False
        return keep

    # -- enforcement ---------------------------------------------------------------------
    @torch.no_grad()
    def apply(self, optimizer: torch.optim.Optimizer | None = None) -> None:
        """Zero pruned weights and every optimizer-state tensor shaped like them."""
        for name, p in self.params.items():
            mask = self.masks[name]
            keep = mask_multiplier(mask)
            p.mul_(keep)
            if optimizer is not None:
                for value in optimizer.state.get(p, {}).values():
                    if torch.is_tensor(value) and value.shape == p.shape:
                        value.mul_(keep)

    @torch.no_grad()
    def mask_gradients(self) -> None:
        """Zero gradients at pruned positions (gradient sparsity enforcement)."""
        for name, p in self.params.items():
            if p.grad is not None:
                p.grad.mul_(mask_multiplier(self.masks[name]))

    # -- facts ---------------------------------------------------------------------------
    def density(self) -> float:
        """Fraction of prunable weights that are kept."""
        kept = sum(int(m.sum()) for m in self.masks.values())
        return kept / sum(m.numel() for m in self.masks.values())

    def pruned_counts(self) -> dict[str, int]:
        """Pruned weights per layer (of the whole tensor: a sharded pruner counts over
        all shards)."""
        return {name: mask.numel() - int(mask.sum()) for name, mask in self.masks.items()}

    def compacted_fraction(self) -> float:
        """Share of the trainable gradient bytes that belong to pruned parameters (what
        compaction can shrink); the rest is sent dense whatever the sparsity."""
        return self.selection.compacted_fraction()

    def model_density(self) -> float:
        """Fraction of all parameters (prunable or not) that are kept."""
        pruned = sum(m.numel() - int(m.sum()) for m in self.masks.values())
        return 1.0 - pruned / self.total_params

    def state_dict(self) -> dict:
        """Masks and schedule position (what a resumed run needs to continue identically)."""
        return {
            "masks": {n: m.clone() for n, m in self.masks.items()},
            "sparsity": self.sparsity,
            "last_update_step": self.last_update_step,
            "config": asdict(self.config),
        }

    def load_state_dict(self, state: dict) -> None:
        """Restore masks and schedule position saved by :meth:`state_dict`."""
        if set(state["masks"]) != set(self.masks):
            raise ValueError(
                "checkpoint masks name other layers than this model "
                f"({sorted(state['masks'])[:3]}... vs {sorted(self.masks)[:3]}...); "
                "resume with the same --model"
            )
        for name, mask in state["masks"].items():
            self.masks[name] = mask.to(self.masks[name].device, torch.bool).clone()
        self.sparsity = float(state["sparsity"])
        self.last_update_step = int(state["last_update_step"])
