"""DGC's schedule and clipping (the hook itself runs in test_baseline_hooks.py)."""

from __future__ import annotations

import itertools

import pytest
import torch

from pactrain.methods.dgc import clip_locally, warmup_density


def test_dgc_warm_up_and_local_clipping() -> None:
    schedule = [warmup_density(t, 0.001, 10) for t in range(12)]
    assert schedule[0] == 0.25 and schedule[-1] == 0.001
    assert all(x >= y for x, y in itertools.pairwise(schedule))
    assert warmup_density(0, 0.2, 5) == 0.25 and warmup_density(4, 0.2, 5) == 0.2
    clipped = clip_locally(torch.full((4,), 10.0), clip_norm=2.0, world=4)
    assert float(clipped.norm()) == pytest.approx(1.0)
