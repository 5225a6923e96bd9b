"""TernGrad's per-parameter draws (the hook itself runs in test_baseline_hooks.py)."""

from __future__ import annotations

import torch

from pactrain.compression.compressors import parameter_generator
from pactrain.compression.memory import BucketSlot
from pactrain.methods.terngrad import TernGradState, bucket_draws


def test_draws_follow_the_parameter_not_its_place_in_a_bucket() -> None:
    state = TernGradState(None, names=None, seed=3, rank=1, step=7)  # type: ignore[arg-type]
    a, b = BucketSlot("a", 0, 0, 2, (2,)), BucketSlot("b", 1, 2, 3, (3,))
    together = bucket_draws(state, (a, b), 5)
    b_first = bucket_draws(state, (b._replace(offset=0), a._replace(offset=3)), 5)
    assert torch.equal(together, torch.cat([b_first[3:], b_first[:3]]))
    alone = torch.rand(3, generator=parameter_generator(3, 1, 7, 1))
    assert torch.equal(together[2:], alone)
    state.step += 1  # the next step draws other numbers
    assert not torch.equal(bucket_draws(state, (a, b), 5), together)
