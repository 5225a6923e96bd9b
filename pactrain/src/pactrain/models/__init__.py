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

A model of the user's own lives outside the package: a Python file (or an importable
module) that calls :func:`register_model`, named in ``$PACTRAIN_MODEL_MODULES``
(``os.pathsep``-separated; ``pactrain train/bench --model-module FILE`` sets it). Every
worker inherits the environment and imports the same files, so the model trains like a
built-in one (``pactrain/benchmarks/heldout_model.py`` is one).

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


#: Files or module names of the user's own models, ``os.pathsep``-separated.
MODEL_MODULES_ENV = "PACTRAIN_MODEL_MODULES"


def load_builtin_models() -> Registry[ModelSpec]:
    """Import every module of this package and those of ``$PACTRAIN_MODEL_MODULES``
    (idempotent) and return :data:`MODELS`."""
    import os

    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        importlib.import_module(f"{__name__}.{info.name}")
    for entry in filter(None, os.environ.get(MODEL_MODULES_ENV, "").split(os.pathsep)):
        import_model_module(entry)
    return MODELS


def import_model_module(entry: str) -> None:
    """Import a user's model module once: a ``.py`` file by path, else a module name.

    Raises:
        FileNotFoundError: ``entry`` looks like a file (ends in ``.py``) and is missing.
        ImportError: the module cannot be imported (the message names ``entry``).
    """
    import importlib.util
    import sys
    import zlib
    from pathlib import Path

    if not entry.endswith(".py"):
        importlib.import_module(entry)
        return
    path = Path(entry).resolve()
    if not path.is_file():
        raise FileNotFoundError(f"model module {entry!r} ({MODEL_MODULES_ENV}) does not exist")
    name = f"pactrain_user_model_{path.stem}_{zlib.crc32(str(path).encode()):08x}"
    if name in sys.modules:
        return
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"model module {entry!r} cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise


def add_model_modules(entries: list[str]) -> None:
    """Import ``entries`` here and export them in ``$PACTRAIN_MODEL_MODULES`` for the
    workers this process starts (they inherit its environment)."""
    import os
    from pathlib import Path

    for entry in entries:
        import_model_module(entry)
    known = [e for e in os.environ.get(MODEL_MODULES_ENV, "").split(os.pathsep) if e]
    exported = [str(Path(e).resolve()) if e.endswith(".py") else e for e in entries]
    os.environ[MODEL_MODULES_ENV] = os.pathsep.join(
        known + [e for e in exported if e not in known])


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
