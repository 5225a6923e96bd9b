"""Gradient bytes against compute per step, per model: does the link matter for it?

For every registered model (or ``--models``): its trainable parameters, the fp32 gradient
a dense all-reduce moves per step, and the forward+backward time of one per-worker batch
(its default batch size) on one thread of this machine (median of ``--repeats`` after two
warm-up passes). The ratio "seconds to send the gradient at 100 Mbit/s (ring all-reduce,
4 workers: 2(N-1)/N x bytes) over seconds of compute" says how link-bound dense training
is: above 1 the link dominates a step.

    python pactrain/benchmarks/model_costs.py --models fashion-cnn,fashion-resnet18
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch

from pactrain.models import check_data, load_builtin_models


def cost(name: str, repeats: int) -> dict[str, float]:
    spec = load_builtin_models().get(name)
    model = spec.build(0)
    inputs, targets = next(spec.batches(0, 4, spec.default_batch_size, 0))
    times = []
    for i in range(repeats + 2):
        started = time.perf_counter()
        model.zero_grad()
        spec.loss(model(inputs), targets).backward()
        if i >= 2:
            times.append(time.perf_counter() - started)
    grad_bytes = sum(p.numel() * 4 for p in model.parameters() if p.requires_grad)
    compute = statistics.median(times)
    link_s = 2 * 3 / 4 * grad_bytes * 8 / 100e6
    return {"parameters": sum(p.numel() for p in model.parameters()),
            "batch": spec.default_batch_size, "grad_mb": grad_bytes / 1e6,
            "compute_s": compute, "link_100mbit_s": link_s, "ratio": link_s / compute}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="fashion-cnn,fashion-resnet18,resnet18,"
                        "vit-tiny,lm-gpt,hf-gpt2")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    names = [m for m in args.models.split(",") if m]
    print("| model | parameters | batch/worker | fp32 gradient MB | fwd+bwd s (1 thread) | "
          "dense ring all-reduce at 100 Mbit/s, 4 workers (s) | link/compute |")
    print("|---|---|---|---|---|---|---|")
    for name in names:
        try:
            check_data([name])
        except FileNotFoundError as err:
            print(f"| {name} | skipped: {err} |")
            continue
        c = cost(name, args.repeats)
        print(f"| {name} | {c['parameters']:,} | {c['batch']} | {c['grad_mb']:.2f} | "
              f"{c['compute_s']:.3f} | {c['link_100mbit_s']:.2f} | {c['ratio']:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
