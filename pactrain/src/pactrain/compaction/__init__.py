"""The compaction hook: all-reduce only the unpruned entries of each DDP bucket.

Every rank holds the same masks (:class:`pactrain.masks.MaskTracker`), so every rank knows
which entries of a bucket can be non-zero. Gathering them into a short dense buffer gives
buffers of equal length and order on all ranks: they can be summed by the ordinary
all-reduce, and no indices travel. The traffic is density x dense traffic, the ideal.

Algorithm of :func:`~.hook.compaction_hook` for one bucket:

1. Look up the bucket's layout (:class:`~.layout.LayoutTable`: kept flat positions, cached
   per bucket index, bucket size, parameters and ``mask_version``; DDP rebuilds its
   buckets after the first iteration, so the key is checked on every call and the layout
   rebuilt when it changes).
2. Look up the bucket's tier (forced, or the adaptive policy's decision, cached per layout
   and policy version, :meth:`~.state.CompactionState.decide`); count it.
3. Send with that tier (its module in :mod:`pactrain.tiers`; :mod:`.send`): ``dense``, the
   fallback, zeroes the pruned entries and all-reduces the whole bucket
   (:func:`~.send.send_whole_bucket`); every other tier gets the kept entries, gathered
   (+ error-feedback residual), and sends them its way (its ``send``: floats, or codes
   with chunk scales), all through one skeleton, :func:`~.send.send_kept`.
   With ``send_density`` the tier gets only this step's agreed sample of the kept entries
   (:mod:`.sampling`: the same on every rank: by default each parameter's chunks of 256
   kept entries with the largest group-wide max |v|, :meth:`~.sampling.Sampler.top_chunks`,
   or every ``stride``-th entry in turn, :meth:`~.sampling.Sampler.cyclic_sample`), and
   the residual keeps the rest. The hook never waits for the group's chunk maxima: it
   starts their MAX and an :class:`OrderedLauncher` sends the bucket once they are in, in
   bucket order (:func:`~.send.send_compacted`); with ``send_select="topk-ahead"`` they
   were agreed at the previous step (:mod:`.ahead_maxima`) and the bucket leaves from the
   hook (:func:`~.send.send_ahead`).
4. On completion scatter the averaged entries back into a zeroed bucket (pruned entries,
   and those not sent this step, are exactly zero) and return the bucket buffer.
5. On the last bucket, close the step of the payload counter and of the overlap timing
   (:mod:`.timing`).

Modules, one job each: :mod:`.layout` (bucket layouts), :mod:`.options` (the options and
their checks), :mod:`.sampling` (the agreed sample), :mod:`.draws` (the ternary draws or
halves), :mod:`.buffers` (the per-bucket buffer pool), :mod:`.timing` (overlap gaps),
:mod:`.ahead_maxima` (``topk-ahead``'s maxima), :mod:`.state` (the state composing them,
tier decisions, plan, checkpoint), :mod:`.send` (the send paths), :mod:`.hook` (the hook).

Roles (GRACE, :mod:`pactrain.compression`): the codes, their packing, per-parameter scales
and draws are pure compressors; residuals of lossy tiers live in a
:class:`~pactrain.compression.memory.ResidualMemory` keyed by parameter name; every
collective goes through the state's :class:`~pactrain.compression.communicator.Communicator`,
which counts the payload (the bytes of every tensor handed to a collective, per rank,
before the ring factor 2(N-1)/N), times it and tells the policy.

Warnings:
- Register before the first iteration (:func:`pactrain.methods.register_hook`;
  :func:`pactrain.attach` does it).
- Under ``no_sync()`` DDP skips the hook; gradients accumulate locally and the hook sees
  their sum on the next synchronized backward, which is what it compacts.
"""

from pactrain.compaction.ahead_maxima import AheadMaxima
from pactrain.compaction.buffers import BufferPool
from pactrain.compaction.draws import Draws
from pactrain.compaction.hook import compaction_hook
from pactrain.compaction.layout import BucketLayout, LayoutTable, build_layout
from pactrain.compaction.options import (
    ROUNDINGS,
    SEND_SELECTIONS,
    TOP_CHUNK_SELECTIONS,
    check_policy,
    check_rounding,
    check_send_density,
    check_send_select,
)
from pactrain.compaction.sampling import (
    ChunkTable,
    Sample,
    Sampler,
    chunk_entries,
    sample_phase,
    sample_stride,
)
from pactrain.compaction.send import (
    send_ahead,
    send_compacted,
    send_kept,
    send_whole_bucket,
)
from pactrain.compaction.state import CompactionState
from pactrain.compaction.timing import GAP_SAMPLES, OverlapTiming

__all__ = [
    "GAP_SAMPLES",
    "ROUNDINGS",
    "SEND_SELECTIONS",
    "TOP_CHUNK_SELECTIONS",
    "AheadMaxima",
    "BucketLayout",
    "BufferPool",
    "ChunkTable",
    "CompactionState",
    "Draws",
    "LayoutTable",
    "OverlapTiming",
    "Sample",
    "Sampler",
    "build_layout",
    "check_policy",
    "check_rounding",
    "check_send_density",
    "check_send_select",
    "chunk_entries",
    "compaction_hook",
    "sample_phase",
    "sample_stride",
    "send_ahead",
    "send_compacted",
    "send_kept",
    "send_whole_bucket",
]
