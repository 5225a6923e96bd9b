"""The building blocks of the baseline compression methods, in GRACE's three roles.

- :mod:`.compressors`: pure compress/decompress (top-k selection, DGC's sampled threshold,
  TernGrad's stochastic ternary quantisation). No state, no communication.
- :mod:`.memory`: what stays local between steps (error-feedback residuals, DGC's
  momentum and accumulation buffers), keyed by bucket index.
- :mod:`.communicator`: the only part that talks: sparse all-gather of (value, index)
  pairs and the two-collective ternary all-reduce. It says what goes on the wire and
  fills the :class:`pactrain.accounting.PayloadCounter`.

The DDP hooks that compose them are methods in :mod:`pactrain.methods` (``topk``, ``dgc``,
``terngrad``; ``fp16`` and ``powersgd`` wrap PyTorch's own hooks).
"""
