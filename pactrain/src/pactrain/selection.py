"""Which parameters PacTrain prunes: weight matrices of linear maps, chosen by parameter.

Why by parameter and not by module type: the models people train implement their
projections in many ways. Hugging Face's GPT-2 uses ``transformers``' ``Conv1D`` (weight
stored as (in, out)) for every attention and MLP projection; PyTorch's
``nn.MultiheadAttention`` keeps Q, K and V in one ``in_proj_weight`` Parameter (a quarter
of each transformer block); users write ``x @ self.w`` with their own 2-D Parameter. A
selector that only knows ``nn.Linear``/``nn.Conv*`` prunes none of those and the
gradient goes out dense while the pruned share looks fine.

Default rule (:func:`default_rule`), per trainable parameter, each tensor once:

- pruned: the ``weight`` of ``nn.Linear`` and ``nn.Conv1d/2d/3d`` (and their subclasses),
  ``nn.MultiheadAttention``'s ``in_proj_weight`` / ``q_proj_weight`` / ``k_proj_weight``
  / ``v_proj_weight``, the ``weight`` of any module whose class is named ``Conv1D`` (the
  Hugging Face one, matched by name so ``transformers`` stays optional), and any other
  parameter of two or more dimensions;
- dense: every parameter of an embedding (``nn.Embedding``/``nn.EmbeddingBag``), also
  where it is tied to a linear head (GPT-2's LM head is the token embedding), of a norm
  layer, every 1-D parameter (biases, norm scales), and multi-dimensional parameters
  whose name says they are a table, not a map (``pos``, ``position``, ``embed``,
  ``token``, ``cls``: learned positional tables, class tokens).

An explicit selector replaces the rule: names or ``fnmatch`` patterns (``"blocks.*.attn.*"``)
matched against every name of a parameter (a tied tensor has several), or a predicate
``(name, parameter) -> bool``. A pattern that matches no trainable parameter is an error
that lists the names it could have matched.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from torch import nn

Predicate = Callable[[str, nn.Parameter], bool]
Selector = str | Sequence[str] | Predicate | None

LINEAR_TYPES: tuple[type[nn.Module], ...] = (nn.Linear, nn.Conv1d, nn.Conv2d, nn.Conv3d)
DENSE_OWNER_TYPES: tuple[type[nn.Module], ...] = (
    nn.Embedding, nn.EmbeddingBag, nn.LayerNorm, nn.GroupNorm, nn.LocalResponseNorm,
    nn.modules.batchnorm._NormBase,
)
MHA_WEIGHTS = ("in_proj_weight", "q_proj_weight", "k_proj_weight", "v_proj_weight")
#: Leaf names of multi-dimensional parameters that are lookup tables, not linear maps.
TABLE_NAME = re.compile(r"pos|position|embed|token|cls", re.IGNORECASE)


class SelectionError(ValueError):
    """An explicit selector is malformed or a pattern matches no trainable parameter."""


@dataclass
class Selection:
    """The outcome of selecting: what is pruned, under which names, and what is not.

    Attributes:
        params: canonical name -> parameter to prune (each tensor once).
        aliases: another name of a pruned tensor -> its canonical name (tied weights).
        frozen: names of parameters that would be selected but do not train.
        dense: canonical names of the trainable parameters left dense.
        trainable_bytes: fp32-or-whatever bytes of every trainable tensor, once each.
    """

    params: dict[str, nn.Parameter] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    frozen: list[str] = field(default_factory=list)
    dense: dict[str, nn.Parameter] = field(default_factory=dict)
    trainable_bytes: int = 0

    def pruned_bytes(self) -> int:
        """Gradient bytes of the selected parameters (all of them, kept or pruned)."""
        return sum(p.numel() * p.element_size() for p in self.params.values())

    def compacted_fraction(self) -> float:
        """Share of the gradient bytes that compaction can shrink (0 when nothing trains)."""
        return self.pruned_bytes() / self.trainable_bytes if self.trainable_bytes else 0.0

    def largest_dense(self, count: int = 3) -> list[tuple[str, int]]:
        """The ``count`` largest dense trainable parameters as (name, entries)."""
        ranked = sorted(self.dense.items(), key=lambda item: -item[1].numel())
        return [(name, p.numel()) for name, p in ranked[:count]]


def default_rule(owner: nn.Module, leaf: str, param: nn.Parameter) -> bool:
    """Whether the default rule prunes ``param``, registered as ``leaf`` on ``owner``."""
    if isinstance(owner, DENSE_OWNER_TYPES) or param.dim() < 2:
        return False
    if isinstance(owner, LINEAR_TYPES) or type(owner).__name__ == "Conv1D":
        return leaf == "weight"
    if isinstance(owner, nn.MultiheadAttention):
        return leaf in MHA_WEIGHTS
    return not TABLE_NAME.search(leaf)


def _names_by_tensor(model: nn.Module) -> dict[int, list[tuple[str, nn.Module, str]]]:
    """Every (full name, owner, leaf name) under which each parameter tensor appears."""
    found: dict[int, list[tuple[str, nn.Module, str]]] = {}
    order: list[int] = []
    for module_name, module in model.named_modules(remove_duplicate=False):
        for leaf, param in module.named_parameters(recurse=False):
            full = f"{module_name}.{leaf}" if module_name else leaf
            if id(param) not in found:
                order.append(id(param))
                found[id(param)] = []
            found[id(param)].append((full, module, leaf))
    return {key: found[key] for key in order}


def _as_predicate(selector: Selector, names: list[str]) -> Callable[[list[str], nn.Parameter],
                                                                   bool]:
    """An explicit selector as a function of (all names of a tensor, tensor)."""
    if callable(selector):
        predicate = selector
        return lambda all_names, param: any(predicate(n, param) for n in all_names)
    patterns = [selector] if isinstance(selector, str) else list(selector or [])
    if not patterns or not all(isinstance(p, str) and p for p in patterns):
        raise SelectionError(f"prune= takes parameter names or fnmatch patterns (non-empty "
                             f"strings) or a predicate (name, parameter) -> bool, got "
                             f"{selector!r}")
    unmatched = [p for p in patterns if not any(fnmatch.fnmatchcase(n, p) for n in names)]
    if unmatched:
        shown = ", ".join(names[:12]) + (f", ... ({len(names)} in all)" if len(names) > 12
                                         else "")
        raise SelectionError(f"prune pattern(s) {', '.join(map(repr, unmatched))} match no "
                             f"trainable parameter; the trainable parameters are: {shown}")
    return lambda all_names, _param: any(fnmatch.fnmatchcase(n, p)
                                         for n in all_names for p in patterns)


def select_prunable(model: nn.Module, selector: Selector = None) -> Selection:
    """Select the parameters to prune (see the module docstring for the rule).

    Args:
        model: the module (not its DDP wrapper).
        selector: ``None`` for the default rule, else names/patterns or a predicate.

    Raises:
        SelectionError: a malformed selector, or a pattern matching nothing.
    """
    tensors = _names_by_tensor(model)
    trainable_names = [name for uses in tensors.values() for name, owner, leaf in uses
                       if owner.get_parameter(leaf).requires_grad]
    explicit = None if selector is None else _as_predicate(selector, trainable_names)
    selection = Selection()
    for uses in tensors.values():
        canonical, owner, leaf = uses[0]
        param = owner.get_parameter(leaf)
        all_names = [name for name, _, _ in uses]
        if explicit is not None:
            chosen = explicit(all_names, param)
        else:
            # a tensor that is an embedding anywhere (a tied LM head) stays dense
            chosen = all(default_rule(o, lf, param) for _, o, lf in uses)
        if param.requires_grad:
            selection.trainable_bytes += param.numel() * param.element_size()
        if not chosen:
            if param.requires_grad:
                selection.dense[canonical] = param
            continue
        if not param.requires_grad:
            # a frozen layer does not train: pruning it would only destroy it, and ranking
            # it would take sparsity away from the layers that do train
            selection.frozen.append(canonical)
            continue
        selection.params[canonical] = param
        for alias in all_names[1:]:
            selection.aliases[alias] = canonical
    return selection
