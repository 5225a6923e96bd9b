"""``fp16``: the kept entries divided by N, as fp16 (2 bytes each)."""

import torch

from pactrain.tiers.half import half_tier

TIER = half_tier("fp16", torch.float16)
