"""Training: the per-rank loop, the worker entry point and the multi-process launcher.

- :mod:`pactrain.train.config`: :class:`RunConfig`, the JSON-serialisable run description.
- :mod:`pactrain.train.loop`: :func:`train_rank`, one rank's training (DDP + method + pruning).
- :mod:`pactrain.train.worker`: ``python -m pactrain.train.worker CONFIG.json`` configured by
  torchrun-style environment variables (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT).
- :mod:`pactrain.train.launch`: :func:`run_training` spawns the workers on this machine.
- :mod:`pactrain.train.local_group`: run a Python function on a local gloo group (tests).
"""
