"""Which parameters are pruned: by parameter, across the ways people build projections."""

import pytest
import torch
from torch import nn

from pactrain.pruning import GradualPruner, NothingToPruneError, PruningConfig
from pactrain.selection import SelectionError, select_prunable


class OwnProjection(nn.Module):
    """A user's hand-written layer: ``x @ w`` with a 2-D Parameter, a positional table."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(16, 16))
        self.pos_table = nn.Parameter(torch.randn(8, 16))
        self.scale = nn.Parameter(torch.ones(16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x + self.pos_table[: x.shape[1]]) @ self.w * self.scale


class TinyLM(nn.Module):
    """Embedding, attention, a hand-written projection, a head tied to the embedding."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(32, 16)
        self.attn = nn.MultiheadAttention(16, 2, batch_first=True)
        self.norm = nn.LayerNorm(16)
        self.own = OwnProjection()
        self.head = nn.Linear(16, 32, bias=False)
        self.head.weight = self.embed.weight  # tied, as GPT-2's LM head

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids)
        x = x + self.attn(x, x, x, need_weights=False)[0]
        return self.head(self.own(self.norm(x)))


def test_default_rule_prunes_attention_and_own_projections_not_tables() -> None:
    selection = select_prunable(TinyLM())
    assert sorted(selection.params) == ["attn.in_proj_weight", "attn.out_proj.weight",
                                        "own.w"]
    # embedding (tied to the head: once, dense), positional table, norm, biases stay dense
    assert "embed.weight" in selection.dense and "head.weight" not in selection.dense
    assert {"own.pos_table", "norm.weight", "attn.in_proj_bias"} <= set(selection.dense)
    pruned = 3 * 16 * 16 + 16 * 16 + 16 * 16
    total = sum(p.numel() for p in TinyLM().parameters())  # tied weight once
    assert selection.compacted_fraction() == pytest.approx(pruned / total)


def test_patterns_select_by_any_name_and_tied_weights_once() -> None:
    selection = select_prunable(TinyLM(), ["head.*", "own.w"])
    assert sorted(selection.params) == ["embed.weight", "own.w"]  # the head's name matched
    assert selection.aliases == {"head.weight": "embed.weight"}


def test_predicate_selects() -> None:
    selection = select_prunable(TinyLM(), lambda name, p: name.startswith("attn.") and
                                p.dim() == 2)
    assert sorted(selection.params) == ["attn.in_proj_weight", "attn.out_proj.weight"]


def test_pattern_matching_nothing_names_the_parameters() -> None:
    with pytest.raises(SelectionError, match=r"'blocks\.\*' match no trainable parameter.*"
                                             r"attn\.in_proj_weight"):
        select_prunable(TinyLM(), ["own.w", "blocks.*"])
    with pytest.raises(SelectionError, match="names or fnmatch patterns"):
        select_prunable(TinyLM(), [3])


def test_frozen_selected_weights_are_left_alone() -> None:
    model = TinyLM()
    model.attn.requires_grad_(False)
    selection = select_prunable(model)
    assert sorted(selection.params) == ["own.w"]
    assert sorted(selection.frozen) == ["attn.in_proj_weight", "attn.out_proj.weight"]
    with pytest.raises(SelectionError):  # a frozen parameter is not a pattern's target
        select_prunable(model, ["attn.in_proj_weight"])


def test_pruner_prunes_multihead_attention_in_proj() -> None:
    model = TinyLM()
    pruner = GradualPruner(model, PruningConfig(final_sparsity=0.5, end_step=0))
    pruner.maybe_update(0)
    pruner.apply()
    zeros = int((model.attn.in_proj_weight == 0).sum()) + int((model.own.w == 0).sum())
    assert zeros > 0.3 * (3 * 16 * 16 + 16 * 16)
    assert int((model.embed.weight == 0).sum()) == 0  # the tied embedding stays dense
    with pytest.raises(NothingToPruneError, match="prune="):
        GradualPruner(nn.Sequential(nn.LayerNorm(4)), PruningConfig(), select=lambda n, p:
                      False)
