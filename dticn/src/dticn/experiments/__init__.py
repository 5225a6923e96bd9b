"""The experiments: the artifact topology on one EventKernel, metrics, seeds, sweeps."""
