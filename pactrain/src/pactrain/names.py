"""Names of the built-in models and methods, without importing torch.

Why: ``pactrain --help`` lists them and answers at once; importing the registries would
import torch first. ``tests/test_registry.py`` checks these tuples against the registries,
so they cannot drift.
"""

MODEL_NAMES: tuple[str, ...] = (
    "digits-cnn", "fashion-cnn", "fashion-resnet18", "gpt-tiny", "hf-gpt2", "lm-gpt",
    "resnet18", "vit-tiny",
)
METHOD_NAMES: tuple[str, ...] = (
    "dense", "dgc", "fp16", "no-comm", "pactrain", "pactrain-bf16", "pactrain-fp16",
    "pactrain-fp32", "pactrain-packed", "pactrain-ternary", "powersgd", "powersgd-r1",
    "powersgd-r2", "terngrad", "topk",
)
