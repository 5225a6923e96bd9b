"""How much noise the code tiers add: rounding error energy over gradient energy.

Why: at equal steps the ternary codes cost PacTrain 50-200 steps to the 88% target on
Fashion-MNIST (docs/pactrain-bench.md); this measures the cause on a real gradient, for
ternary codes ({-1, 0, 1} x scale), five-level codes ({-2..2} x scale / 2, the
``quinary`` tier) and nine-level codes ({-4..4} x scale / 4, ``nonary``), per chunk
size, with the tiers' own rule (:func:`~pactrain.compression.compressors.level_codes`):
scale = the chunk's max |g|, ``code = sign(g) x floor(L |g| / scale + u)``, ``u ~ U[0,
1)`` (unbiased).

The gradient: one rank's, one batch of ``--batch-size`` Fashion-MNIST images through
fashion-cnn's initial weights, for the classifier's first weight (3.2 M entries, 99% of the
model), the ``--keep`` share of entries with the largest |w| kept (a stand-in for a mask).

    python pactrain/benchmarks/rounding_error.py
"""

from __future__ import annotations

import argparse

import torch
from rich.console import Console
from rich.table import Table

from pactrain.compression.compressors import chunk_abs_max, level_codes, scale_chunks
from pactrain.models import get_model, load_builtin_models


def kept_gradient(batch_size: int, keep: float, seed: int) -> torch.Tensor:
    """The kept entries of fashion-cnn's classifier weight gradient on one batch."""
    load_builtin_models()
    spec = get_model("fashion-cnn")
    torch.manual_seed(seed)
    model = spec.build(seed)
    inputs, targets = next(spec.batches(0, 1, batch_size, seed, 0))
    spec.loss(model(inputs), targets).backward()
    layer = model.classifier[1]
    weights = layer.weight.detach().flatten().abs()
    threshold = weights.kthvalue(int((1 - keep) * weights.numel())).values
    return layer.weight.grad.flatten()[weights >= threshold]


def rounding_error(values: torch.Tensor, chunk: int, levels: int, draws: int,
                   generator: torch.Generator) -> float:
    """Mean over ``draws`` of ``|delivered - values|^2 / |values|^2``."""
    bounds = ((0, values.numel()),)
    step = chunk_abs_max(values, bounds, chunk) / levels
    energy = float(values.pow(2).sum())
    total = 0.0
    for _ in range(draws):
        uniform = torch.rand(values.shape, generator=generator)
        codes = level_codes(values, step, bounds, uniform, levels, chunk)
        delivered = scale_chunks(codes.to(torch.float32), step, bounds, chunk)
        total += float((delivered - values).pow(2).sum()) / energy
    return total / draws


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--keep", type=float, default=0.1)
    parser.add_argument("--chunks", type=int, nargs="+", default=[256, 64, 16])
    parser.add_argument("--draws", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    values = kept_gradient(args.batch_size, args.keep, args.seed)
    generator = torch.Generator().manual_seed(args.seed)
    table = Table(title=f"rounding error energy / gradient energy ({values.numel():,} "
                        "kept entries of fashion-cnn's classifier weight)")
    table.add_column("codes")
    for chunk in args.chunks:
        table.add_column(f"chunk {chunk}", justify="right")
    for name, levels in (("ternary {-1,0,1} x scale", 1), ("five levels {-2..2} x scale/2", 2),
                         ("nine levels {-4..4} x scale/4", 4)):
        table.add_row(name, *[f"{rounding_error(values, chunk, levels, args.draws, generator):.2f}"
                              for chunk in args.chunks])
    console = Console()
    console.print(table)
    full = values.numel() // 256 * 256
    ratio = (values[:full].view(-1, 256).abs().amax(1)
             / values[:full].view(-1, 256).abs().mean(1).clamp_min(1e-30))
    console.print(f"a chunk's max |g| over its mean |g| (median over chunks of 256): "
                  f"{float(ratio.nanmedian()):.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
