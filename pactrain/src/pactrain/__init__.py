"""PacTrain: pruning-aware, all-reduce-compatible gradient compression for PyTorch DDP.

``pactrain.attach(ddp_model, optimizer, sparsity=..., total_steps=...)`` is the one call
for your own loop (:mod:`pactrain.attached`).
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["AttachError", "PacTrain", "__version__", "attach"]


def __getattr__(name: str) -> Any:
    """Import torch only when the library API is used (``pactrain --help`` stays fast)."""
    if name in ("attach", "PacTrain", "AttachError"):
        from pactrain import attached
        return getattr(attached, name)
    raise AttributeError(f"module 'pactrain' has no attribute {name!r}")
