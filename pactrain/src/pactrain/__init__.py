"""PacTrain: pruning-aware, all-reduce-compatible gradient compression for PyTorch DDP."""

__version__ = "0.1.0"
