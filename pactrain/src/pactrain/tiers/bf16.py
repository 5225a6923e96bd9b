"""``bf16``: the kept entries divided by N, as bf16 (2 bytes each). Not among the adaptive
policy's default choices: it costs what fp16 costs, with 8 bits of mantissa fewer."""

import torch

from pactrain.tiers.half import half_tier

TIER = half_tier("bf16", torch.bfloat16, adaptive_default=False)
