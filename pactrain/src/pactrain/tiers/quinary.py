"""``quinary``: stochastic codes in {-2, -1, 0, 1, 2} (half a chunk scale a level), packed.

Why a tier between ``packed`` and ``fp16``: the ternary codes' rounding noise is what
PacTrain pays in steps on short links (docs/pactrain-bench.md). With one level more a side
an entry far below its chunk's scale is rounded over half the distance: on a fashion-cnn
gradient (chunks of 256 kept entries) the error's energy is 0.38 of the gradient's against
1.34 for ternary codes (docs/pactrain-bench.md, 2026-12-06), for 4.57 bits an entry
instead of 3.2 at N = 4 (7 base-17 digits a word). Protocol: :mod:`pactrain.tiers.levels`.
"""

from pactrain.tiers.levels import level_encoder, level_tier

#: Code magnitudes a side: codes in [-LEVELS, LEVELS].
LEVELS = 2

TIER = level_tier("quinary", LEVELS)
encode = level_encoder(LEVELS)
