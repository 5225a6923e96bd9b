"""Model registry: what `pactrain train` and `pactrain bench` can train.

Contract (other modules and the benchmarks rely on it)
------------------------------------------------------
A model is registered as a :class:`ModelSpec` in :data:`MODELS`. A spec is data plus four
callables, so the training loop never needs to know which model it runs:

- ``build(seed) -> nn.Module``: the model, initialised deterministically from ``seed``
  (every rank builds the same weights; DDP would broadcast them anyway).
- ``batches(rank, world_size, batch_size, seed, start_step) -> Iterator[(inputs, targets)]``:
  this rank's training batches, endless. Each rank sees a disjoint shard of every global
  batch. The stream is a pure function of its arguments, so a resumed run that passes
  ``start_step`` sees exactly the batches the uninterrupted run would have seen.
- ``loss(outputs, targets) -> Tensor``: the training loss (a scalar).
- ``evaluate(model) -> dict[str, float]``: held-out metrics, e.g. ``{"test_accuracy": ...,
  "test_loss": ...}`` for classifiers, ``{"test_loss": ..., "perplexity": ...}`` for LMs.
  ``primary_metric`` names the key that reports quote.

Modules of this package register their specs on import; :func:`load_builtin_models`
imports every module found in the package (kept lazy so that ``pactrain --help`` does not
import torch). Adding a model is adding a module here that calls :func:`register_model`.

Example::

    from pactrain.models import MODELS, load_builtin_models
    load_builtin_models()
    spec = MODELS.get("digits-cnn")
    model = spec.build(seed=0)
    inputs, targets = next(spec.batches(rank=0, world_size=2, batch_size=32, seed=0))
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pactrain.registry import Registry

if TYPE_CHECKING:
    import torch
    from torch import nn

Batch = tuple["torch.Tensor", "torch.Tensor"]
BatchStream = Callable[..., Iterator[Batch]]

@dataclass(frozen=True)
class ModelSpec:
    """Everything the training loop needs to know about one model and its data.

    Attributes:
        name: the registry name (``--model``).
        build: ``seed -> nn.Module``, deterministic in ``seed``.
        batches: ``(rank, world_size, batch_size, seed, start_step=0) -> iterator of
            (inputs, targets)``; ``batch_size`` is per rank.
        loss: ``(outputs, targets) -> scalar tensor``.
        evaluate: ``model -> dict of metrics`` on held-out data (the model is in eval mode
            while it runs and is put back in train mode afterwards by the caller).
        primary_metric: key of ``evaluate``'s result that reports quote
            (``"test_accuracy"`` or ``"test_loss"``).
        higher_is_better: whether a larger primary metric is better.
        default_batch_size: per-rank batch size when the user gives none.
        default_lr: learning rate of the default optimizer (SGD with momentum).
        default_adamw_lr: learning rate under ``--optimizer adamw``.
        description: one line for ``--help`` and docs.
        check_data: raises (e.g. :class:`FileNotFoundError` naming the install command)
            when the model's data is missing; cheap, so the CLI runs it before any worker
            starts (``None``: the data ships with a dependency).
        extra: free-form facts (parameter count, dataset size) for reports.
    """

    name: str
    build: Callable[[int], nn.Module]
    batches: BatchStream
    loss: Callable[[Any, Any], torch.Tensor]
    evaluate: Callable[[nn.Module], dict[str, float]]
    primary_metric: str = "test_accuracy"
    higher_is_better: bool = True
    default_batch_size: int = 32
    default_lr: float = 0.05
    default_adamw_lr: float = 1e-3
    description: str = ""
    check_data: Callable[[], Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


MODELS: Registry[ModelSpec] = Registry("model")


def register_model(spec: ModelSpec) -> ModelSpec:
    """Add ``spec`` to :data:`MODELS` under ``spec.name`` and return it."""
    return MODELS.register(spec.name)(spec)


def load_builtin_models() -> Registry[ModelSpec]:
    """Import every module of this package (idempotent) and return :data:`MODELS`."""
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        importlib.import_module(f"{__name__}.{info.name}")
    return MODELS


def get_model(name: str) -> ModelSpec:
    """Look ``name`` up after loading the built-in models (``KeyError`` lists the choices)."""
    return load_builtin_models().get(name)


def check_data(names: list[str], data_dir: str | None = None) -> None:
    """Raise the first model's missing-data error among ``names`` (before any worker starts).

    ``data_dir`` (``--data-dir``) is exported as ``$PACTRAIN_DATA`` first, so the workers,
    which inherit the environment, read the same folder.
    """
    import os

    if data_dir is not None:
        os.environ["PACTRAIN_DATA"] = str(data_dir)
    for name in names:
        spec = get_model(name)
        if spec.check_data is not None:
            spec.check_data()
