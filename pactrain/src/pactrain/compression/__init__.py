"""Gradient compression in GRACE's three roles, shared by PacTrain's tiers and the baselines.

- :mod:`.compressors`: pure functions from gradients to what goes on the wire and back
  (ternary codes and their carry-free lane packing, top-k, DGC's sampled top-k, TernGrad's
  clipping, the tier table, per-parameter random draws). No state, no communication.
- :mod:`.memory`: what stays local between steps, keyed by parameter name so that it
  survives DDP's bucket rebuild and a resume (the one error-feedback
  :class:`~.memory.ResidualMemory`, DGC's momentum correction, the per-bucket bookkeeping).
- :mod:`.communicator`: the only part that talks. One :class:`~.communicator.Communicator`
  per hook launches every collective, counts its payload and times it from launch to
  completion, which is how every method reports ``comm_s_per_step``.

A method (:mod:`pactrain.methods`, and PacTrain's :mod:`pactrain.compaction`) is a thin DDP
hook plus one state object composing these three.
"""
