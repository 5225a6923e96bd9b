"""Names of the built-in models and methods, without importing torch.

Why: ``pactrain --help`` lists them and answers at once; importing the registries would
import torch first. ``tests/test_registry.py`` checks these tuples against the registries,
so they cannot drift. PacTrain's forced-tier methods come from the tier registry
(:data:`pactrain.tiers.TIER_NAMES`, which imports nothing heavy).
"""

from pactrain.tiers import forced_method_names

MODEL_NAMES: tuple[str, ...] = (
    "digits-cnn", "fashion-cnn", "fashion-resnet18", "gpt-tiny", "hf-gpt2", "lm-gpt",
    "resnet18", "vit-tiny",
)
METHOD_NAMES: tuple[str, ...] = tuple(sorted((
    "dense", "dgc", "fp16", "no-comm", "pactrain", "pactrain-hier", "pactrain-hier-fp32",
    *forced_method_names(), "powersgd",
    "powersgd-r1", "powersgd-r2", "terngrad", "topk",
)))
#: How weights are ranked for pruning, the default first (:mod:`pactrain.pruning`).
PRUNE_SCOPES: tuple[str, ...] = ("lamp", "global", "layer")
#: Optimizers a run can train with, the default first (:mod:`pactrain.train.optimizers`).
OPTIMIZERS: tuple[str, ...] = ("sgd", "adamw")


def check_optimizer(name: str) -> None:
    """Refuse an unknown optimizer name in one line that lists the known ones (here, so
    the CLI checks it before importing torch)."""
    if name not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer {name!r}; choose one of {', '.join(OPTIMIZERS)}")
