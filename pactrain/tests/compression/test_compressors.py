"""Compressors on their own: ternary codes unbiased in expectation, int8 sums bounded,
packed lanes carry-free; per-slot scales; per-parameter draws; top-k selections."""

import pytest
import torch

from pactrain.compression.compressors import (
    MAX_TERNARY_WORLD_SIZE,
    RadixPacking,
    SparseGradient,
    check_int8_sum,
    clip_to_sigma,
    draw_seed,
    k_for,
    parameter_generator,
    sampled_topk_compress,
    scale_slots,
    segment_bounds,
    slot_abs_max,
    ternary_codes,
    ternary_decode,
    ternary_encode,
    topk_compress,
    uniform_draws,
)
from pactrain.tiers import get_tier


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


@pytest.mark.parametrize(("world_size", "levels"),
                         [(n, 1) for n in (1, 2, 3, 4, 7, 8, 15, 16, 127, 128)]
                         + [(n, 2) for n in (1, 2, 4, 8, 63)]
                         + [(n, 4) for n in (1, 4, 8)])
def test_packed_digits_sum_without_carries_for_every_partial_sum(world_size: int,
                                                                 levels: int) -> None:
    """Extreme codes (all +1 or all -1 on every rank) and random codes: every partial sum
    of the packed words, as a ring reduce-scatter forms them, stays inside int32 and
    unpacks to the sum of the codes."""
    packing = RadixPacking.for_world(world_size, levels)
    base, reach = packing.base, world_size * levels
    assert base == 2 * reach + 1
    assert (reach + 1) * base ** (packing.digits - 1) <= 2 ** 31       # fits
    assert (reach + 1) * base ** packing.digits > 2 ** 31              # the most
    generator = torch.Generator().manual_seed(world_size)
    count = 3 * packing.digits + 1  # a padded last word
    for fill in (1, -1, None):
        codes = [torch.full((count,), fill * levels, dtype=torch.int8) if fill is not None
                 else torch.randint(-levels, levels + 1, (count,),
                                    generator=generator).to(torch.int8)
                 for _ in range(world_size)]
        partial = torch.zeros(packing.words_for(count), dtype=torch.int64)
        for seen, rank_codes in enumerate(codes, start=1):
            words = packing.pack(rank_codes)
            assert words.dtype == torch.int32 and words.numel() == packing.words_for(count)
            partial += words.to(torch.int64)
            assert int(partial.max()) < 2 ** 31 and int(partial.min()) >= -2 ** 31
            expected = torch.stack(codes[:seen]).to(torch.int32).sum(0)
            # a partial sum of `seen` ranks decodes with `seen` offsets removed
            partial_packing = RadixPacking(seen, packing.base, packing.digits, levels)
            sums = partial_packing.unpack(partial.to(torch.int32), count)
            assert torch.equal(sums, expected)


def test_packed_digits_and_bytes_per_entry() -> None:
    # base 2N+1: N = 4 -> 10 base-9 digits per int32 word (3.2 bits; log2(9) = 3.17 is the
    # floor, binary 4-bit lanes held 8), N = 2 -> 13 base-5, N = 7 -> 8 base-15
    digits = [RadixPacking.for_world(n).digits for n in (1, 2, 3, 4, 7, 8, 127)]
    assert digits == [19, 13, 11, 10, 8, 7, 4]
    assert RadixPacking.for_world(4).bytes_per_entry == 0.4
    assert 8 * RadixPacking.for_world(4).bytes_per_entry <= 3.3          # issue 22's bound
    packed, ternary = get_tier("packed"), get_tier("ternary")
    assert packed.bytes_per_entry(4) == 0.4 and ternary.bytes_per_entry(4) == 1
    # 1,000 kept entries at N = 4: 400 B of codes + 4 chunk scales of 4 B
    assert packed.payload_bytes(5000, 1000, 4) == 416
    with pytest.raises(ValueError, match="world size must be >= 1"):
        RadixPacking.for_world(0)
    # five-level codes (quinary): 7 base-17 digits at N = 4, 4.57 bits
    assert RadixPacking.for_world(4, 2).digits == 7
    assert get_tier("quinary").bytes_per_entry(4) == pytest.approx(4 / 7)
    # nine-level codes (nonary): base 33, 6 digits at N = 4 (5.33 bits); three levels a
    # side (base 25) would hold no more
    assert RadixPacking.for_world(4, 4).digits == RadixPacking.for_world(4, 3).digits == 6
    assert get_tier("nonary").bytes_per_entry(4) == pytest.approx(4 / 6)
    with pytest.raises(ValueError, match="levels must be >= 1"):
        RadixPacking.for_world(4, 0)


def test_one_world_size_limit_for_every_int8_sum_of_codes() -> None:
    assert MAX_TERNARY_WORLD_SIZE == 127
    check_int8_sum(127, "unused")
    with pytest.raises(ValueError, match=r"overflows above 127 workers .*; use fp16"):
        check_int8_sum(128, "use fp16")


def test_slot_scales_code_like_per_entry_scales() -> None:
    """Per-parameter scales applied per slot (PacTrain's tier, TernGrad) give the codes
    and decoded values of :func:`ternary_encode` with the scales expanded per entry."""
    generator = torch.Generator().manual_seed(4)
    lengths = [5, 0, 7, 3]
    values = torch.randn(15, generator=generator)
    values[12:] = 0.0  # a parameter whose gradient is zero: scale 0, codes 0
    bounds = segment_bounds(lengths)
    assert bounds == ((0, 5), (5, 5), (5, 12), (12, 15))
    scales = slot_abs_max(values, bounds)
    assert scales[1] == 0 and scales[3] == 0
    assert torch.equal(scales[[0, 2]], torch.stack([values[:5].abs().max(),
                                                    values[5:12].abs().max()]))
    uniform = torch.rand(15, generator=generator)
    per_entry = torch.repeat_interleave(scales, torch.tensor(lengths))
    codes = ternary_codes(values, scale_slots(uniform.clone(), scales, bounds))
    assert torch.equal(codes, ternary_encode(values, per_entry, uniform))
    assert torch.equal(scale_slots(codes.float(), scales, bounds), codes.float() * per_entry)


def test_draws_are_per_parameter_streams_of_one_seed_formula() -> None:
    out = uniform_draws(torch.empty(5), 3, 1, 7, [4, 9], [2, 3])
    assert torch.equal(out[:2], torch.rand(2, generator=parameter_generator(3, 1, 7, 4)))
    assert torch.equal(out[2:], torch.rand(3, generator=torch.Generator().manual_seed(
        draw_seed(3, 1, 7, 9))))
    assert draw_seed(3, 1, 8, 9) != draw_seed(3, 1, 7, 9) != draw_seed(3, 0, 7, 9)


def test_k_for_rounds_up_and_refuses_bad_density() -> None:
    assert k_for(10, 0.01) == 1 and k_for(1000, 0.2) == 200 and k_for(5, 1.0) == 5
    with pytest.raises(ValueError, match="density"):
        k_for(10, 0.0)


def test_sampled_threshold_selects_the_exact_top_k() -> None:
    g = torch.randn(50_000, generator=torch.Generator().manual_seed(0))
    exact = set(topk_compress(g, 500).indices.tolist())
    sampled = sampled_topk_compress(g, 500, torch.Generator().manual_seed(1))
    assert set(sampled.indices.tolist()) == exact
    assert torch.equal(sampled.to_dense()[sampled.indices], g[sampled.indices])


def test_sparse_parts_join_at_their_offsets() -> None:
    parts = [(0, topk_compress(torch.tensor([1.0, -3.0]), 1)),
             (2, topk_compress(torch.tensor([0.5, 2.0, 0.0]), 1))]
    joined = SparseGradient.join(parts, 5)
    assert joined.to_dense().tolist() == [0.0, -3.0, 0.0, 2.0, 0.0]


def test_sigma_clipping_bounds_outliers() -> None:
    g = torch.cat([torch.zeros(99), torch.tensor([100.0])])
    assert clip_to_sigma(g, 2.5).max() < 100.0


def test_chunk_scales_cover_every_entry_and_the_short_tail() -> None:
    from pactrain.compression.compressors import chunk_abs_max, chunk_count, scale_chunks

    values = torch.arange(-5.0, 6.0)  # slot 0: 10 entries (chunks of 4, 4, 2), slot 1: 1
    bounds = ((0, 10), (10, 11))
    scales = chunk_abs_max(values, bounds, chunk=4)
    assert chunk_count(10, 4) == 3
    assert scales.tolist() == [5.0, 2.0, 4.0, 5.0]  # chunks restart at every slot
    scaled = scale_chunks(torch.ones(11), torch.tensor([1.0, 2.0, 3.0, 4.0]), bounds, chunk=4)
    assert scaled.tolist() == [1.0] * 4 + [2.0] * 4 + [3.0] * 2 + [4.0]


def test_chunked_ternary_is_unbiased_and_far_less_noisy_than_one_scale() -> None:
    """Why the ternary tiers scale per chunk: one outlier sets a per-tensor scale that
    drowns every small entry in noise; chunk scales keep the noise local to its chunk."""
    from pactrain.compression.compressors import chunk_abs_max, scale_chunks, ternary_codes

    generator = torch.Generator().manual_seed(0)
    values = torch.randn(4096, generator=generator) * 0.01
    values[7] = 10.0  # one large gradient entry
    trials = 200
    errors = {"tensor": 0.0, "chunk": 0.0}
    mean_chunked = torch.zeros_like(values)
    for _ in range(trials):
        uniform = torch.rand(4096, generator=generator)
        one = values.abs().max()
        codes = ternary_codes(values, uniform * one)
        errors["tensor"] += float(((codes * one - values) ** 2).sum())
        scales = chunk_abs_max(values, ((0, 4096),))
        codes = ternary_codes(values, scale_chunks(uniform.clone(), scales, ((0, 4096),)))
        decoded = scale_chunks(codes.float(), scales, ((0, 4096),))
        errors["chunk"] += float(((decoded - values) ** 2).sum())
        mean_chunked += decoded / trials
    # the outlier still drowns its own chunk (1 of 16): about 16x less squared error
    assert errors["chunk"] < errors["tensor"] / 10
    # unbiased: the average of the draws approaches v (5 sigma of 200 draws outside the
    # outlier's chunk, where the scale is about 0.04: sqrt(0.01 x 0.04 / 200) = 0.0014)
    assert float((mean_chunked - values)[256:].abs().max()) < 0.01
