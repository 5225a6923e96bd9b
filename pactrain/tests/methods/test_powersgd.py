"""PowerSGD wrapper: rank variants, the memory layout it assumes, the replay plan."""

from __future__ import annotations

import torch
from torch import nn

from pactrain.compression.memory import BucketSlot, ParameterNames
from pactrain.methods import MethodConfig, get_method
from pactrain.methods.powersgd import (
    PowerSGDMethod,
    ReplayBucket,
    memory_pieces,
    powersgd_hook,
)
from pactrain.train.local_group import run_on_local_group


def _method(name: str, model: nn.Module, **options: object) -> PowerSGDMethod:
    config = MethodConfig(world_size=1, options=dict(options))
    return get_method(name).factory(None, model, config, None)


def test_variants_fix_their_rank_and_powersgd_reads_the_option() -> None:
    model = nn.Linear(4, 4)
    assert _method("powersgd", model).summary()["rank"] == 4
    assert _method("powersgd", model, rank=2).summary()["rank"] == 2
    # the bench passes its default rank to PowerSGD methods: the name's rank wins
    assert _method("powersgd-r1", model, rank=4).summary()["rank"] == 1
    assert _method("powersgd-r2", model, rank=4).summary()["rank"] == 2


class _ThreeMatrices(nn.Module):
    """Two matrices of one shape around one of another shape, and a bias PowerSGD skips."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Parameter(torch.zeros(8, 6))
        self.b = nn.Parameter(torch.zeros(4, 6))
        self.c = nn.Parameter(torch.zeros(8, 6))
        self.bias = nn.Parameter(torch.zeros(3))


def _q_memory_after_one_compressed_step(rank: int, world_size: int) -> dict[str, object]:
    model = _ThreeMatrices()
    method = _method("powersgd-r1", model, start_iter=2)
    method.state.inner.iter = 2  # past the warm-up
    # rank-1 gradients u v^T with |u| = 1 and v = scale * ones: Q ends up as +-scale * ones
    scales = {"a": 1.0, "b": 2.0, "c": 3.0}
    grads = [torch.outer(torch.full((p.shape[0],), p.shape[0] ** -0.5), torch.full((6,), s))
             for p, s in zip((model.a, model.b, model.c), scales.values(), strict=True)]
    buffer = torch.cat([g.flatten() for g in grads] + [torch.zeros(3)])
    bucket = ReplayBucket(0, buffer, list(model.parameters()), last=True)
    powersgd_hook(method.state, bucket).wait()  # type: ignore[arg-type]
    _, p_pieces, q_pieces = memory_pieces(ParameterNames(model).slots(bucket), method.state.inner)
    return {"q": method.state.inner.q_memory_dict[0], "pieces": q_pieces, "p": p_pieces}


def test_memory_pieces_follow_powersgd_hooks_layout() -> None:
    got = run_on_local_group(_q_memory_after_one_compressed_step, 1)[0]
    # PyTorch groups compressed tensors by shape: a and c (8 x 6) before b (4 x 6)
    assert [name for name, _ in got["pieces"]] == ["a", "c", "b", "bias"]
    assert got["p"] == (("a", 8), ("c", 8), ("b", 4), ("bias", 0))
    q = got["q"].abs().view(3, 6)
    assert torch.allclose(q, torch.tensor([1.0, 3.0, 2.0]).unsqueeze(1).expand(3, 6))


def test_replay_plan_splits_a_bucket_into_the_checkpoints_buckets() -> None:
    model = _ThreeMatrices()
    state = _method("powersgd", model).state
    names = ParameterNames(model)
    params = dict(model.named_parameters())

    def slots(*order: str) -> tuple[BucketSlot, ...]:
        chosen = [params[name] for name in order]
        numel = sum(p.numel() for p in chosen)
        return names.slots(ReplayBucket(0, torch.zeros(numel), chosen, last=True))

    assert state.replay_plan(slots("a", "b")) == []  # nothing saved: delegate
    state.saved_buckets = {0: ("bias", "c"), 1: ("b", "a")}
    everything = slots("a", "b", "c", "bias")  # DDP's first-iteration bucket
    assert state.replay_plan(everything) == [(0, ("bias", "c")), (1, ("b", "a"))]
    assert state.replay_plan(slots("b", "a")) == []  # a checkpoint bucket itself
    assert state.replay_plan(slots("a", "c")) == []  # not a union: delegate directly
