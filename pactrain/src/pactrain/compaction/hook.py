"""The DDP communication hook of PacTrain: per bucket, look up its layout and tier, send
it on the tier's path (:mod:`pactrain.compaction.send`), and close the step on the last.

Hook annotations are checked by DDP at runtime, hence no ``from __future__ import
annotations`` in this module.
"""

from collections import Counter

import torch
import torch.distributed as dist

from pactrain.compaction.send import send_ahead, send_compacted, send_whole_bucket
from pactrain.compaction.state import CompactionState


def compaction_hook(state: CompactionState, bucket: dist.GradBucket,
                    ) -> torch.futures.Future[torch.Tensor]:
    """DDP communication hook of PacTrain (see :mod:`pactrain.compaction` for the steps).

    Example::

        state = CompactionState(None, tracker, world_size, rank, seed, FixedPolicy("fp32"))
        ddp_model.register_comm_hook(state, compaction_hook)
    """
    buffer = bucket.buffer()
    index = bucket.index()
    state.note_ready(index)
    layout = state.layout(bucket)
    tier = state.decide(index, layout).tier
    state.tier_counts.setdefault(index, Counter())[tier] += 1
    state.record_plan(index, tier)
    spec = state.tiers[tier]
    if not spec.compacts:
        send = send_whole_bucket
    elif state.send_select == "topk-ahead" and state.send_density is not None:
        send = send_ahead
    else:
        send = send_compacted
    future = send(state, index, spec, buffer, layout)
    if bucket.is_last():
        state.gradients_masked = True
        state.comm.end_step()
        state.close_step_timing()
        state.step += 1
    return future
