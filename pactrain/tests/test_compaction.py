"""The compaction hook on real multi-process gloo groups, against PyTorch's allreduce_hook."""

import pytest
import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from pactrain.compaction import CompactionState, compaction_hook
from pactrain.compression.compressors import MAX_TERNARY_WORLD_SIZE, RadixPacking
from pactrain.masks import MaskTracker
from pactrain.methods.dense import DenseState, dense_hook
from pactrain.policy import FixedPolicy
from pactrain.pruning import GradualPruner, PruningConfig
from pactrain.train.local_group import run_on_local_group


def _model() -> nn.Module:
    torch.manual_seed(0)
    # 1.5 MB: more than one 1 MB bucket once DDP rebuilds its buckets after iteration 1.
    return nn.Sequential(nn.Linear(12, 600), nn.ReLU(), nn.Linear(600, 600), nn.ReLU(),
                         nn.Linear(600, 4))


def _pruned(sparsity: float) -> tuple[nn.Module, MaskTracker]:
    model = _model()
    tracker = MaskTracker(GradualPruner(model, PruningConfig(
        final_sparsity=sparsity, start_step=0, end_step=0, frequency=1)))
    tracker.step(0)
    return model, tracker


def _compare_with_dense(rank: int, world_size: int, bucket_cap_mb: float, accumulation: int,
                        as_view: bool) -> dict:
    """Train two DDP copies side by side: dense hook (+ masking after) and compacted fp32."""
    model_a, tracker_a = _pruned(0.7)
    model_b, tracker_b = _pruned(0.7)
    ddp_a = DistributedDataParallel(model_a, bucket_cap_mb=bucket_cap_mb,
                                    gradient_as_bucket_view=as_view)
    ddp_b = DistributedDataParallel(model_b, bucket_cap_mb=bucket_cap_mb,
                                    gradient_as_bucket_view=as_view)
    ddp_a.register_comm_hook(DenseState(None), dense_hook)
    state = CompactionState(None, tracker_b, world_size, rank, 0, FixedPolicy("fp32"))
    ddp_b.register_comm_hook(state, compaction_hook)
    opt_a = torch.optim.SGD(model_a.parameters(), lr=0.1, momentum=0.9)
    opt_b = torch.optim.SGD(model_b.parameters(), lr=0.1, momentum=0.9)
    bitwise, max_diff = True, 0.0
    for it in range(4):
        generator = torch.Generator().manual_seed(1000 * it + rank)
        batches = [(torch.randn(8, 12, generator=generator),
                    torch.randint(0, 4, (8,), generator=generator)) for _ in range(accumulation)]
        for ddp, opt in ((ddp_a, opt_a), (ddp_b, opt_b)):
            opt.zero_grad()
            for micro, (x, y) in enumerate(batches):
                if micro < accumulation - 1:
                    with ddp.no_sync():
                        nn.functional.cross_entropy(ddp(x), y).backward()
                else:
                    nn.functional.cross_entropy(ddp(x), y).backward()
        tracker_a.pruner.mask_gradients()
        for p_a, p_b in zip(model_a.parameters(), model_b.parameters(), strict=True):
            bitwise &= torch.equal(p_a.grad, p_b.grad)
            max_diff = max(max_diff, float((p_a.grad - p_b.grad).abs().max()))
        for name, mask in tracker_b.pruner.masks.items():
            assert (tracker_b.pruner.params[name].grad[~mask] == 0).all()
        opt_a.step()
        opt_b.step()
    kept = sum(int(m.sum()) for m in tracker_b.pruner.masks.values())
    dense = sum(p.numel() for p in model_b.parameters())
    pruned = sum(m.numel() for m in tracker_b.pruner.masks.values()) - kept
    return {"bitwise": bitwise, "max_diff": max_diff,
            "payload": state.payload.bytes_per_step(), "ideal": 4 * (dense - pruned),
            "buckets": len(state.layouts)}


@pytest.mark.parametrize(("bucket_cap_mb", "as_view"), [(25.0, False), (1.0, True)])
def test_fp32_compaction_equals_dense_of_masked_gradient_bitwise_at_two(
    bucket_cap_mb: float, as_view: bool,
) -> None:
    results = run_on_local_group(_compare_with_dense, 2, bucket_cap_mb, 1, as_view)
    for result in results:
        assert result["bitwise"], result
        assert result["payload"] == result["ideal"]
    if bucket_cap_mb < 2:
        assert results[0]["buckets"] > 1  # buckets that mix pruned weights and dense biases


@pytest.mark.slow
def test_fp32_compaction_allclose_at_three_with_no_sync_accumulation() -> None:
    results = run_on_local_group(_compare_with_dense, 3, 1.0, 3, False)
    for result in results:
        assert result["max_diff"] < 1e-6, result


def _ternary_sum(rank: int, world_size: int) -> list:
    """Every rank sends the extreme value (+max) everywhere: codes sum to +world_size."""
    model, tracker = _pruned(0.5)
    state = CompactionState(None, tracker, world_size, rank, 0, FixedPolicy("ternary"),
                            error_feedback=False)
    ddp = DistributedDataParallel(model)
    ddp.register_comm_hook(state, compaction_hook)
    for p in model.parameters():
        p.grad = None
    out = ddp(torch.ones(2, 12))
    (out.sum() * 0).backward()  # gradients all zero
    return [p.grad.abs().max().item() for p in model.parameters()]


def test_ternary_of_zero_gradients_is_zero_on_three_ranks() -> None:
    for grads in run_on_local_group(_ternary_sum, 3):
        assert max(grads) == 0.0


def test_ternary_refused_above_127_workers() -> None:
    _, tracker = _pruned(0.5)
    with pytest.raises(ValueError, match="overflow above 127"):
        CompactionState(None, tracker, MAX_TERNARY_WORLD_SIZE + 1, 0, 0, FixedPolicy("ternary"))
    CompactionState(None, tracker, MAX_TERNARY_WORLD_SIZE, 0, 0, FixedPolicy("ternary"))


def _adaptive(rank: int, world_size: int) -> dict:
    from pactrain.methods import MethodConfig, get_method, register_hook

    model, tracker = _pruned(0.8)
    ddp = DistributedDataParallel(model, bucket_cap_mb=1.0)
    config = MethodConfig(world_size=world_size, rank=rank, refresh_every=2)
    method = get_method("pactrain").factory(None, ddp, config, tracker)
    register_hook(ddp, method)
    for step in range(6):
        generator = torch.Generator().manual_seed(step * 10 + rank)
        ddp(torch.randn(4, 12, generator=generator)).sum().backward()
        tracker.pruner.mask_gradients()
        method.on_step_end(step)
    summary = method.summary()
    return {"counts": summary["tier_counts_per_bucket"], "link": summary["policy"]["link"],
            "version": summary["policy"]["version"], "steps": method.payload.steps,
            "budgets": summary["policy"]["budgets_s"]}


@pytest.mark.slow
def test_adaptive_policy_decides_identically_on_every_rank() -> None:
    results = run_on_local_group(_adaptive, 2)
    assert results[0]["counts"] == results[1]["counts"]
    assert results[0]["link"] == results[1]["link"]  # agreed by all-reduce
    # the first refresh after step 2, the next paced by its cost (not within 6 steps of
    # these 2 ms steps), and the overlap plans at it and after step 5: 3 versions
    assert results[0]["version"] == results[1]["version"] == 3
    assert results[0]["steps"] == 6
    budgets = results[0]["budgets"]
    assert budgets == results[1]["budgets"] and len(budgets) >= 2  # agreed, per bucket
    assert min(budgets.values()) == 0.0 < max(budgets.values())  # the last bucket hides none
    assert sum(sum(c.values()) for c in results[0]["counts"].values()) >= 6


def _ternary_mean(rank: int, world_size: int, iterations: int) -> dict:
    """Same local gradient every iteration: the ternary hook's average must converge to
    the exact average (unbiased), with per-parameter scales and int8 sums on the wire."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3))
    tracker = MaskTracker(GradualPruner(model, PruningConfig(
        final_sparsity=0.3, start_step=0, end_step=0, frequency=1)))
    tracker.step(0)
    generator = torch.Generator().manual_seed(rank)
    x, y = torch.randn(5, 6, generator=generator), torch.randint(0, 3, (5,), generator=generator)
    nn.functional.cross_entropy(model(x), y).backward()
    tracker.pruner.mask_gradients()
    local = torch.cat([p.grad.flatten() for p in model.parameters()])
    exact = local.clone()
    torch.distributed.all_reduce(exact)
    exact /= world_size
    model.zero_grad(set_to_none=True)
    state = CompactionState(None, tracker, world_size, rank, 0, FixedPolicy("ternary"),
                            model=model)
    ddp = DistributedDataParallel(model)
    ddp.register_comm_hook(state, compaction_hook)
    total = torch.zeros_like(local)
    for _ in range(iterations):
        model.zero_grad(set_to_none=False)
        nn.functional.cross_entropy(ddp(x), y).backward()
        total += torch.cat([p.grad.flatten() for p in model.parameters()])
    return {"mean": total / iterations, "exact": exact, "local": local,
            "payload": state.payload.bytes_per_step(), "kept": int(state.layouts[0].kept.numel())}


@pytest.mark.slow
def test_ternary_hook_is_unbiased_on_a_real_group() -> None:
    iterations = 400
    results = run_on_local_group(_ternary_mean, 2, iterations)
    mean, exact = results[0]["mean"], results[0]["exact"]
    assert torch.equal(mean, results[1]["mean"])  # every rank decodes the same sum
    scale = torch.stack([r["local"].abs() for r in results]).max(0).values.max()
    bound = 5 * (scale ** 2 / 2 / iterations) ** 0.5  # 5 sigma of the worst-case variance
    assert float((mean - exact).abs().max()) < float(bound)
    assert float((mean - exact).abs().mean()) < float(bound) / 3
    # on the wire: one int8 per kept entry plus one fp32 scale per parameter (4 of them)
    assert results[0]["payload"] == results[0]["kept"] + 4 * 4


def _packed_against_int8(rank: int, world_size: int) -> dict:
    """Two copies of one pruned model, one hook per ternary wire format, same seed: the
    packed digits must deliver exactly what the int8 sum delivers, for fewer bytes."""
    results: dict = {}
    for tier in ("ternary", "packed"):
        model, tracker = _pruned(0.8)
        state = CompactionState(None, tracker, world_size, rank, 7, FixedPolicy(tier),
                                error_feedback=True, model=model)
        ddp = DistributedDataParallel(model, bucket_cap_mb=1.0)
        ddp.register_comm_hook(state, compaction_hook)
        grads = []
        for it in range(3):
            generator = torch.Generator().manual_seed(100 * it + rank)
            model.zero_grad(set_to_none=False)
            nn.functional.cross_entropy(ddp(torch.randn(8, 12, generator=generator)),
                                        torch.randint(0, 4, (8,), generator=generator)).backward()
            grads.append(torch.cat([p.grad.flatten() for p in model.parameters()]))
        kept_words = sum(RadixPacking.for_world(world_size).words_for(int(lay.kept.numel()))
                         for lay in state.layouts.values())
        results[tier] = {"grads": grads, "payload": dict(state.payload.by_collective),
                         "steps": state.payload.steps, "kept_words": kept_words,
                         "buckets": len(state.layouts),
                         "kept": sum(int(lay.kept.numel()) for lay in state.layouts.values())}
    return results


@pytest.mark.parametrize("world_size", [2, 3])
def test_packed_digits_deliver_the_int8_ternary_sum_bitwise(world_size: int) -> None:
    for result in run_on_local_group(_packed_against_int8, world_size):
        int8, packed = result["ternary"], result["packed"]
        assert all(torch.equal(a, b) for a, b in zip(int8["grads"], packed["grads"],
                                                        strict=True))
        assert any(g.abs().sum() > 0 for g in packed["grads"])
        steps = packed["steps"]
        # 13 base-5 (2 ranks) or 11 base-7 (3 ranks) digits per int32 word: 0.31 / 0.36 B
        # (DDP re-buckets after the first step: each bucket's last word may round apart)
        words = packed["payload"]["all_reduce_packed"] / 4
        assert abs(words - packed["kept_words"] * steps) <= packed["buckets"] * steps
        assert packed["payload"]["all_reduce_packed"] <= 0.37 * packed["kept"] * steps + 4 * 8
        assert int8["payload"]["all_reduce"] == int8["kept"] * steps
        assert packed["payload"]["all_reduce_max"] == int8["payload"]["all_reduce_max"]
