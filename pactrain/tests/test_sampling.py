"""Agreed sampling inside the mask (``send_density``) on real 2-rank gloo groups: what is
sent, that error feedback conserves what was not, and the refusals."""

import pytest
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from pactrain.compaction import CompactionState, chunk_entries, compaction_hook, sample_stride
from pactrain.compression.compressors import ternary_codes
from pactrain.masks import MaskTracker
from pactrain.policy import FixedPolicy
from pactrain.pruning import GradualPruner, PruningConfig
from pactrain.train.local_group import run_on_local_group

STEPS = 11  # DDP's first step, then a whole cycle of the largest stride here (10)


def _pruned_model(sparsity: float) -> tuple[nn.Module, MaskTracker]:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(12, 600), nn.ReLU(), nn.Linear(600, 600), nn.ReLU(),
                          nn.Linear(600, 4))
    tracker = MaskTracker(GradualPruner(model, PruningConfig(
        final_sparsity=sparsity, start_step=0, end_step=0, frequency=1)))
    tracker.step(0)
    return model, tracker


def _sampled_steps(rank: int, world_size: int, tier: str, send_density: float,
                   error_feedback: bool, send_select: str = "cyclic",
                   rounding: str = "stochastic") -> dict:
    """STEPS backward passes of one fixed batch (the same on both ranks, no optimizer
    step): the gradient g is the same every step, so what the hook delivered over the steps
    plus the group's mean residual must add up to STEPS x g."""
    model, tracker = _pruned_model(0.7)
    reference = [p.detach().clone() for p in model.parameters()]
    ddp = DistributedDataParallel(model)
    state = CompactionState(None, tracker, world_size, rank, 0, FixedPolicy(tier),
                            error_feedback=error_feedback, model=model,
                            send_density=send_density, send_select=send_select,
                            rounding=rounding)
    ddp.register_comm_hook(state, compaction_hook)
    generator = torch.Generator().manual_seed(7)
    x, y = torch.randn(16, 12, generator=generator), torch.randint(0, 4, (16,),
                                                                   generator=generator)
    delivered = [torch.zeros_like(p) for p in model.parameters()]
    sent_at_least_once = [torch.zeros_like(p, dtype=torch.bool) for p in model.parameters()]
    bytes_per_step = []
    for _ in range(STEPS):
        model.zero_grad()
        before = state.payload.total_bytes
        nn.functional.cross_entropy(ddp(x), y).backward()
        bytes_per_step.append(state.payload.total_bytes - before)
        for total, seen, p in zip(delivered, sent_at_least_once, model.parameters(),
                                  strict=True):
            total += p.grad
            seen |= p.grad != 0
    # the exact gradient of the batch, from an unwrapped copy of the same weights
    plain = nn.Sequential(nn.Linear(12, 600), nn.ReLU(), nn.Linear(600, 600), nn.ReLU(),
                          nn.Linear(600, 4))
    with torch.no_grad():
        for p, w in zip(plain.parameters(), reference, strict=True):
            p.copy_(w)
    nn.functional.cross_entropy(plain(x), y).backward()
    conservation, pruned_nonzero, never_sent = 0.0, 0, 0
    masks = {id(tracker.pruner.params[n]): m for n, m in tracker.pruner.masks.items()}
    for (name, p), total, seen, q in zip(model.named_parameters(), delivered,
                                         sent_at_least_once, plain.parameters(), strict=True):
        residual = state.memory.residuals.get(name, torch.zeros(p.numel())).reshape(p.shape)
        residual = residual.clone()
        dist.all_reduce(residual)
        residual /= world_size
        mask = masks.get(id(p), torch.ones_like(p, dtype=torch.bool))
        expected = STEPS * q.grad * mask
        conservation = max(conservation, float((total + residual - expected).abs().max()))
        pruned_nonzero += int((total[~mask] != 0).sum())
        never_sent += int((mask & ~seen & (q.grad != 0)).sum())
    buckets = [(lay.numel, int(lay.kept.numel()), state.stride(lay))
               for lay in state.layouts.values()]
    estimate = sum(state.sent_estimate(lay) for lay in state.layouts.values())
    return {"conservation": conservation, "scale": float(max(q.grad.abs().max()
                                                             for q in plain.parameters())),
            "pruned_nonzero": pruned_nonzero, "never_sent": never_sent,
            "bytes": bytes_per_step, "buckets": buckets, "estimate": estimate}


@pytest.mark.parametrize(("tier", "error_feedback"), [("fp32", False), ("packed", True)])
def test_sampling_sends_a_share_and_the_residual_keeps_the_rest(tier: str,
                                                                 error_feedback: bool) -> None:
    # the unsent entries wait in the residual even without error feedback (fp32 has no
    # quantization error); with it, packed codes' errors wait there too
    results = run_on_local_group(_sampled_steps, 2, tier, 0.1, error_feedback)
    for result in results:
        # DDP's rebuilt buckets (its first is 1 MiB); 30% kept of the large one, at most
        # 10% of it per step: every third kept entry
        strides = [stride for _, _, stride in result["buckets"]]
        assert 3 in strides
        for numel, kept, stride in result["buckets"]:
            assert stride == sample_stride(numel, kept, 0.1)
        assert result["pruned_nonzero"] == 0
        if tier == "fp32":  # (a ternary code of a sent entry may be 0)
            # every kept entry travelled within a cycle of its bucket's stride
            assert result["never_sent"] == 0
        # nothing lost: delivered over the steps + the group's residual = STEPS x gradient
        assert result["conservation"] <= 1e-5 * STEPS * result["scale"] + 1e-7
        per_entry = 4.0 if tier == "fp32" else 4 / 13  # N = 2: 13 digits a word
        sent = sum(kept / stride for _, kept, stride in result["buckets"])
        for nbytes in result["bytes"][1:]:  # after DDP's first-step bucket
            assert nbytes <= 1.05 * per_entry * sent + 4 * (sent / 256 + 40)
            assert nbytes >= 0.95 * per_entry * sent


@pytest.mark.parametrize(("tier", "error_feedback", "rounding"),
                         [("fp32", False, "stochastic"), ("packed", False, "stochastic"),
                          ("packed", True, "nearest")])
def test_agreed_top_chunks_send_the_budget_and_lose_nothing(tier: str, error_feedback: bool,
                                                           rounding: str) -> None:
    results = run_on_local_group(_sampled_steps, 2, tier, 0.1, error_feedback, "topk",
                                 rounding)
    assert results[0]["bytes"] == results[1]["bytes"]  # both ranks chose the same chunks
    for result in results:
        assert result["pruned_nonzero"] == 0
        if error_feedback or tier == "fp32":
            # exact, or every error kept: delivered + residual = STEPS x gradient
            assert result["conservation"] <= 1e-5 * STEPS * result["scale"] + 1e-7
        # each parameter sends at most 10% of its entries, in chunks of 256 (at least one)
        numel = sum(n for n, _, _ in result["buckets"])
        assert result["estimate"] <= 0.1 * numel + 256 * 6
        per_entry = 4.0 if tier == "fp32" else 4 / 13
        for nbytes in result["bytes"][1:]:
            # the entries (+ their ternary scales) + the chunk maxima agreed on first
            chunks = sum(-(-kept // 256) + 3 for _, kept, _ in result["buckets"])
            assert nbytes <= per_entry * result["estimate"] + 4 * chunks \
                + 4 * (result["estimate"] / 256 + 6)


def test_top_chunks_agreed_ahead_send_the_budget_and_lose_nothing() -> None:
    """``topk-ahead`` codes with last step's maxima: what they clip stays in the residual,
    so delivered + residual is still STEPS x gradient; both ranks pick the same chunks;
    one MAX a bucket a step, as when agreeing first."""
    ahead = run_on_local_group(_sampled_steps, 2, "packed", 0.1, True, "topk-ahead")
    now = run_on_local_group(_sampled_steps, 2, "packed", 0.1, True, "topk")
    assert ahead[0]["bytes"] == ahead[1]["bytes"]
    for result in ahead:
        assert result["pruned_nonzero"] == 0
        assert result["conservation"] <= 1e-5 * STEPS * result["scale"] + 1e-7
    # after the first step (which agrees now, then for the next step)
    assert sum(ahead[0]["bytes"][1:]) == pytest.approx(sum(now[0]["bytes"][1:]), rel=0.01)


def test_topk_ahead_needs_error_feedback() -> None:
    _, tracker = _pruned_model(0.5)
    with pytest.raises(ValueError, match="drop --no-error-feedback"):
        CompactionState(None, tracker, 2, 0, 0, FixedPolicy("packed"), error_feedback=False,
                        send_density=0.1, send_select="topk-ahead")


def test_sampling_needs_a_density_in_range() -> None:
    _, tracker = _pruned_model(0.5)
    with pytest.raises(ValueError, match=r"send_density must be in \(0, 1\]"):
        CompactionState(None, tracker, 1, 0, 0, FixedPolicy("fp32"), send_density=1.5)
    with pytest.raises(ValueError, match="send_select must be one of topk, topk-ahead, cyclic"):
        CompactionState(None, tracker, 1, 0, 0, FixedPolicy("fp32"), send_density=0.1,
                        send_select="random")


def test_rounding_is_one_of_two_and_nearest_rounds_half_up_without_draws() -> None:
    _, tracker = _pruned_model(0.5)
    with pytest.raises(ValueError, match="rounding must be one of stochastic, nearest"):
        CompactionState(None, tracker, 1, 0, 0, FixedPolicy("packed"), rounding="up")
    state = CompactionState(None, tracker, 1, 0, 0, FixedPolicy("packed"), rounding="nearest")
    thresholds = state.half_thresholds(0, 5, torch.device("cpu"))
    assert torch.equal(thresholds, torch.full((5,), 0.5))
    thresholds.mul_(3.0)  # a tier scales them in place ...
    assert torch.equal(state.half_thresholds(0, 5, torch.device("cpu")),
                       torch.full((5,), 0.5))  # ... and the next call refills them
    values = torch.tensor([0.6, -0.6, 0.4, -0.4, 1.0])
    codes = ternary_codes(values, state.half_thresholds(0, 5, torch.device("cpu")) * 1.0)
    assert codes.tolist() == [1, -1, 0, 0, 1]  # scale 1: |v| > 1/2 is sent


def test_a_checkpoint_resumes_only_with_its_rounding_and_error_feedback() -> None:
    _, tracker = _pruned_model(0.5)
    written = CompactionState(None, tracker, 1, 0, 0, FixedPolicy("packed"),
                              rounding="nearest").state_dict()
    with pytest.raises(ValueError, match="written with rounding=nearest, this run has "
                                         "rounding=stochastic"):
        CompactionState(None, tracker, 1, 0, 0, FixedPolicy("packed")).load_state_dict(written)
    kept = CompactionState(None, tracker, 1, 0, 0, FixedPolicy("packed"), error_feedback=True)
    dropped = CompactionState(None, tracker, 1, 0, 0, FixedPolicy("packed"),
                              error_feedback=False)
    with pytest.raises(ValueError, match="written with error_feedback=True, this run has "
                                         "error_feedback=False"):
        dropped.load_state_dict(kept.state_dict())
    legacy = kept.state_dict()
    del legacy["error_feedback"]  # a checkpoint from before it was recorded
    dropped.load_state_dict(legacy)


def test_a_checkpoint_resumes_only_with_its_send_density() -> None:
    _, tracker = _pruned_model(0.5)
    written = CompactionState(None, tracker, 1, 0, 0, FixedPolicy("fp32"),
                              send_density=0.05).state_dict()
    same = CompactionState(None, tracker, 1, 0, 0, FixedPolicy("fp32"), send_density=0.05)
    same.load_state_dict(written)
    changed = CompactionState(None, tracker, 1, 0, 0, FixedPolicy("fp32"))
    with pytest.raises(ValueError, match=r"written with send_density=0\.05, this run has "
                                         r"send_density=None"):
        changed.load_state_dict(written)


def test_stride_is_one_once_the_mask_keeps_fewer_than_the_budget() -> None:
    assert sample_stride(1000, 1000, 0.1) == 10     # unpruned: every tenth entry
    assert sample_stride(1000, 250, 0.1) == 3       # 75% pruned
    assert sample_stride(1000, 100, 0.1) == 1       # 90% pruned: everything kept travels
    assert sample_stride(5, 5, 0.1) == 5            # at least one entry a step



def _launched_both_ways(rank: int, world_size: int, tier: str, send_select: str) -> dict:
    """The same pruned model and batches twice: scales on their own group (each bucket's
    codes launched from its MAX's completion, :class:`OrderedLauncher`) and on the one
    group (the hook waits). Tiny buckets, so many launches are in flight at once."""
    from pactrain.compression.protocols import scale_group_for

    grads: dict[str, list[torch.Tensor]] = {}
    for way in ("apart", "waited"):
        model, tracker = _pruned_model(0.7)
        scale_group = scale_group_for(None, world_size) if way == "apart" else None
        state = CompactionState(None, tracker, world_size, rank, 3, FixedPolicy(tier),
                                error_feedback=True, model=model, scale_group=scale_group,
                                send_density=0.1, send_select=send_select)
        assert state.scales_apart == (way == "apart")
        ddp = DistributedDataParallel(model, bucket_cap_mb=0.05)
        ddp.register_comm_hook(state, compaction_hook)
        grads[way] = []
        for step in range(4):
            generator = torch.Generator().manual_seed(10 * step + rank)
            model.zero_grad(set_to_none=False)
            nn.functional.cross_entropy(
                ddp(torch.randn(8, 12, generator=generator)),
                torch.randint(0, 4, (8,), generator=generator)).backward()
            grads[way].append(torch.cat([p.grad.flatten() for p in model.parameters()]))
        grads[way].append(torch.tensor(float(len(state.layouts))))
        assert state.launcher.waiting == 0
    return grads


@pytest.mark.parametrize(("tier", "send_select"),
                         [("packed", "topk"), ("ternary", "cyclic"), ("fp16", "topk")])
def test_codes_launched_from_completions_equal_codes_sent_after_waiting(
        tier: str, send_select: str) -> None:
    """Launching from callbacks keeps every rank's collective order (gloo aborts on a
    mismatch) and changes no number: bitwise the gradients of waiting for the scales."""
    results = run_on_local_group(_launched_both_ways, 3, tier, send_select)
    for result in results:
        assert result["apart"][-1] >= 2  # buckets in flight together
        for apart, waited in zip(result["apart"], result["waited"], strict=True):
            assert torch.equal(apart, waited)
    assert all(torch.equal(a, b) for a, b in zip(results[0]["apart"], results[1]["apart"],
                                                 strict=True))


@pytest.mark.parametrize("short_rows", [(), (0,), (2,), (5,), (0, 3, 5)])
def test_chunk_entries_are_each_chunks_positions_in_order(short_rows: tuple[int, ...]) -> None:
    """The broadcast form of a top-chunk sample's positions equals the per-entry listing,
    whichever chunks are short (a parameter's last chunk, picked or not)."""
    chunk = 8
    lengths = torch.full((6,), chunk, dtype=torch.int64)
    for row in short_rows:
        lengths[row] = 1 + row % (chunk - 1)
    starts = torch.cumsum(lengths, 0) - lengths + 3  # a sample's chunks need not be adjacent
    starts[4:] += 40
    expected = torch.cat([torch.arange(int(s), int(s) + int(n))
                          for s, n in zip(starts, lengths, strict=True)])
    assert torch.equal(chunk_entries(starts, lengths, chunk), expected)


def test_top_chunks_count_each_parameters_entries_sent() -> None:
    """``per_slot`` and ``bounds`` of a top-chunk sample say how many of the entries sent
    belong to each parameter: whole chunks, a parameter's short last chunk when picked,
    and nothing for a parameter with no kept entry (what the codes' scales and draws are
    laid out by)."""
    from pactrain.compaction import BucketLayout
    from pactrain.compression.memory import BucketSlot

    model, tracker = _pruned_model(0.7)
    state = CompactionState(None, tracker, 1, 0, 0, FixedPolicy("packed"),
                            error_feedback=True, model=model, send_density=0.05,
                            send_select="topk")
    # kept entries per parameter: several chunks with a short last one, none, one short
    # chunk, whole chunks only
    sizes = (5 * 256 + 17, 0, 100, 4 * 256)
    bounds, at = [], 0
    for size in sizes:
        bounds.append((at, at + size))
        at += size
    layout = BucketLayout(key=(0, at, (), 1), numel=at, kept=torch.arange(at) * 2,
                          flat_mask=torch.ones(at, dtype=torch.bool),
                          slots=tuple(BucketSlot(f"p{i}", i, 0, 0, (0,)) for i in range(4)),
                          kept_per_slot=sizes, bounds=tuple(bounds))
    table = state.chunk_table(layout)
    assert table.counts == (6, 0, 1, 4) and table.sampled
    for seed in range(5):
        agreed = torch.rand(sum(table.counts), generator=torch.Generator().manual_seed(seed))
        agreed[5] = 2.0  # the first parameter's short last chunk wins on some draws
        sample = state.top_chunks(layout, agreed)
        counted = tuple(int(((sample.chosen >= a) & (sample.chosen < b)).sum())
                        for a, b in bounds)
        assert sample.per_slot == counted
        assert sample.chosen.unique().numel() == sample.chosen.numel()
        assert torch.equal(sample.positions, layout.kept[sample.chosen])
        assert sample.bounds[-1][1] == sample.chosen.numel()
        assert counted[1] == 0 and counted[2] == 100


def _density_set_mid_run(rank: int, world_size: int) -> dict:
    """Four backward passes of one batch: no sampling, then ``set_send_density(0.1)``
    before the third (the second is the first in DDP's rebuilt buckets) and 0.05 before
    the fourth (the chunk budgets of 0.1 are forgotten)."""
    model, tracker = _pruned_model(0.7)
    ddp = DistributedDataParallel(model)
    state = CompactionState(None, tracker, world_size, rank, 0, FixedPolicy("fp32"),
                            error_feedback=False, model=model, may_sample=True)
    ddp.register_comm_hook(state, compaction_hook)
    generator = torch.Generator().manual_seed(7)
    x, y = torch.randn(16, 12, generator=generator), torch.randint(0, 4, (16,),
                                                                   generator=generator)
    sent, nbytes, estimates = [], [], []
    for step in range(4):
        if step >= 2:
            state.set_send_density(0.1 if step == 2 else 0.05)
        model.zero_grad()
        before = state.payload.total_bytes
        nn.functional.cross_entropy(ddp(x), y).backward()
        nbytes.append(state.payload.total_bytes - before)
        sent.append(sum(int((p.grad != 0).sum()) for p in model.parameters()))
        estimates.append(sum(state.sent_estimate(lay) for lay in state.layouts.values()))
    numel = sum(p.numel() for p in model.parameters())
    return {"sent": sent, "bytes": nbytes, "estimates": estimates, "numel": numel,
            "waiting": sum(int((r != 0).sum()) for r in state.memory.residuals.values())}


def test_set_send_density_changes_the_entries_sent_from_the_next_step() -> None:
    results = run_on_local_group(_density_set_mid_run, 2)
    for result in results:
        unsampled, sampled = result["sent"][1], result["sent"][2]
        # every kept entry before; after the call at most 10% of the model's entries
        # (whole chunks of 256, at least one a parameter), and the rest waits
        assert sampled < unsampled
        assert sampled <= 0.1 * result["numel"] + 256 * 6
        assert result["estimates"][2] < result["estimates"][1]
        assert result["bytes"][2] < result["bytes"][1]
        assert result["sent"][3] < sampled and result["estimates"][3] < result["estimates"][2]
        assert result["waiting"] > 0
    assert results[0]["bytes"] == results[1]["bytes"]  # both ranks chose the same chunks
    _, tracker = _pruned_model(0.5)
    state = CompactionState(None, tracker, 1, 0, 0, FixedPolicy("fp32"), error_feedback=False)
    with pytest.raises(ValueError, match="may_sample=True"):
        state.set_send_density(0.1)  # nowhere to keep what is not sent
    with pytest.raises(ValueError, match=r"send_density must be in \(0, 1\]"):
        state.set_send_density(1.5)
