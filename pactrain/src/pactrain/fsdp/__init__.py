"""PacTrain under FSDP2 (``torch.distributed.fsdp.fully_shard``): masks kept with the shards,
and FSDP2's two collectives compacted by them.

FSDP2 all-gathers each module's parameters before its forward (and again before its
backward when it resharded) and reduce-scatters their gradients after the backward. With
the pruning mask known on every rank, both collectives carry zeros at the pruned positions;
here they carry only the kept entries, in mask order, with no indices:

- :mod:`pactrain.fsdp.sharded_pruning`: the masks of a sharded model, derived from per-layer
  statistics that the ranks agree on (never a full tensor), kept with each rank's shard;
- :mod:`pactrain.fsdp.layout`: one FSDP module's masks in the layout of its collectives
  (world rows of the concatenated dim-0 shards), kept bit-packed;
- :mod:`pactrain.fsdp.collectives`: the reduce-scatter and all-gather that FSDP2 calls
  through ``set_custom_reduce_scatter`` / ``set_custom_all_gather``, compacted by that
  layout (and their dense, counted twins for the reference run);
- :mod:`pactrain.fsdp.method`: what :func:`pactrain.attach` builds for an FSDP2 model.
"""
