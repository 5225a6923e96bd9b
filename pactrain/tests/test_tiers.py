"""Ternary tiers: unbiased in expectation, int8 sums bounded, packed lanes carry-free;
error feedback bookkeeping."""

import pytest
import torch

from pactrain.tiers import (
    MAX_TERNARY_WORLD_SIZE,
    ErrorFeedback,
    LanePacking,
    ternary_decode,
    ternary_encode,
    wire_bytes_per_entry,
)


def test_ternary_is_unbiased_in_expectation() -> None:
    generator = torch.Generator().manual_seed(0)
    world_size, draws = 3, 4000
    grads = torch.randn(world_size, 64, generator=generator)
    scale = float(grads.abs().max())
    exact = grads.mean(0)
    total = torch.zeros(64)
    for _ in range(draws):
        codes = torch.stack([
            ternary_encode(grads[r], scale, torch.rand(64, generator=generator))
            for r in range(world_size)
        ])
        total += ternary_decode(codes.sum(0, dtype=torch.int8), scale, world_size)
    estimate = total / draws
    # per-entry variance of one draw: sum_r (s|g_r| - g_r^2) / N^2
    variance = (scale * grads.abs() - grads ** 2).sum(0) / world_size ** 2
    standard_error = (variance / draws).sqrt()
    z = (estimate - exact).abs() / standard_error.clamp_min(1e-12)
    assert float(z.max()) < 5.0, float(z.max())
    assert float(z.mean()) < 1.5  # |N(0,1)| has mean 0.8; a biased codec drifts far above


def test_codes_are_ternary_and_127_extreme_codes_fit_in_int8() -> None:
    values = torch.tensor([-2.0, -1.0, 0.0, 1.0, 2.0])
    codes = ternary_encode(values, 2.0, torch.rand(5, generator=torch.Generator().manual_seed(1)))
    assert codes.dtype == torch.int8 and set(codes.tolist()) <= {-1, 0, 1}
    assert codes[0] == -1 and codes[2] == 0 and codes[4] == 1  # |v| = scale: always sent
    extreme = torch.stack([codes] * MAX_TERNARY_WORLD_SIZE).sum(0, dtype=torch.int8)
    assert extreme[0] == -127 and extreme[4] == 127
    assert ternary_encode(values, 0.0, torch.rand(5)).abs().sum() == 0


def test_error_feedback_returns_what_was_dropped() -> None:
    memory = ErrorFeedback()
    kept = torch.tensor([0, 2, 5])
    memory.store((0, 8), 8, kept, torch.tensor([0.5, -1.0, 2.0]))
    values = memory.compensate((0, 8), kept, torch.ones(3))
    assert values.tolist() == [1.5, 0.0, 3.0]
    # a checkpoint stores residuals per parameter; a new layout (b before a) gets them back
    saved = memory.state_dict({(0, 8): (("a", 0, 3), ("b", 3, 5))})
    restored = ErrorFeedback()
    restored.load_state_dict(saved)
    restored.materialize((1, 8), (("b", 0, 5), ("a", 5, 3)))
    assert restored.residuals[(1, 8)].tolist() == [0, 0, 2.0, 0, 0, 0.5, 0, -1.0]
    assert not restored.pending
    # DDP rebuilds its buckets: the residual follows its parameters to their new offsets
    restored.release((1, 8), (("b", 0, 5), ("a", 5, 3)))
    restored.materialize((0, 8), (("a", 0, 3), ("b", 3, 5)))
    assert restored.residuals[(0, 8)].tolist() == [0.5, 0, -1.0, 0, 0, 2.0, 0, 0]
    assert (1, 8) not in restored.residuals
    memory.drop((0, 8))
    assert memory.compensate((0, 8), kept, torch.ones(3)).tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("world_size", [1, 2, 3, 4, 7, 8, 15, 16, 127, 128])
def test_packed_lanes_sum_without_carries_for_every_partial_sum(world_size: int) -> None:
    """Extreme codes (all +1 or all -1 on every rank) and random codes: every partial sum
    of the packed words, as a ring reduce-scatter forms them, stays inside int32 and
    unpacks to the sum of the codes."""
    packing = LanePacking.for_world(world_size)
    assert 2 * world_size < 2 ** packing.width and packing.lanes == 32 // packing.width
    generator = torch.Generator().manual_seed(world_size)
    count = 3 * packing.lanes + 1  # a padded last word
    for fill in (1, -1, None):
        codes = [torch.full((count,), fill, dtype=torch.int8) if fill is not None else
                 torch.randint(-1, 2, (count,), generator=generator).to(torch.int8)
                 for _ in range(world_size)]
        partial = torch.zeros(packing.words_for(count), dtype=torch.int64)
        for seen, rank_codes in enumerate(codes, start=1):
            words = packing.pack(rank_codes)
            assert words.dtype == torch.int32 and words.numel() == packing.words_for(count)
            partial += words.to(torch.int64)
            assert int(partial.max()) < 2 ** 31 and int(partial.min()) >= -2 ** 31
            expected = torch.stack(codes[:seen]).to(torch.int32).sum(0)
            # a partial sum of `seen` ranks decodes with `seen` offsets removed
            partial_packing = LanePacking(seen, packing.width, packing.lanes)
            sums = partial_packing.unpack(partial.to(torch.int32), count)
            assert torch.equal(sums, expected)


def test_packed_lane_widths_and_bytes_per_entry() -> None:
    # ceil(log2(2N+1)) bits: N = 2, 3 -> 3 bits (10 lanes), N = 4..7 -> 4 bits (8 lanes)
    assert [LanePacking.for_world(n).width for n in (1, 2, 3, 4, 7, 8)] == [2, 3, 3, 4, 4, 5]
    assert LanePacking.for_world(4).bytes_per_entry == 0.5
    assert wire_bytes_per_entry("packed", 4) == 0.5 and wire_bytes_per_entry("ternary", 4) == 1
    with pytest.raises(ValueError, match="world size must be >= 1"):
        LanePacking.for_world(0)
