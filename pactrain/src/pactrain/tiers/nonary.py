"""``nonary``: stochastic codes in {-4..4} (a quarter of a chunk scale a level), packed.

Why four levels a side and not three: at N = 4 both pack 6 digits into an int32 word
(base 33 against base 25; :class:`~pactrain.compression.compressors.RadixPacking`), so
the fourth level is free: 5.33 bits a kept entry against ``quinary``'s 4.57, for a quarter
of a scale's rounding instead of half. Protocol: :mod:`pactrain.tiers.levels`.
"""

from pactrain.tiers.levels import level_encoder, level_tier

#: Code magnitudes a side: codes in [-LEVELS, LEVELS].
LEVELS = 4

TIER = level_tier("nonary", LEVELS)
encode = level_encoder(LEVELS)
