"""What each candidate operating point costs in learning per step (the numbers behind
:class:`pactrain.operating_point.Rules`).

Every candidate trains ``--model`` from the same seed for ``--steps`` steps on loopback
(what a step learns does not depend on the link), 4 workers, the packed tier (the one the
adaptive policy takes on a slow link), evaluating on the held-out set every
``--eval-every`` steps. A candidate is a pruning schedule (fractions of the run, and a
share pruned at once) and a send budget (``send_density``). Printed and written: the
first step at ``--target``, the mean metric over the second half, payload per step.

    python pactrain/benchmarks/operating_points.py --seed 2 --out results/adaptive/points-seed2
"""

from __future__ import annotations

import argparse
import json
import sys

from rich.console import Console
from rich.progress import Progress

from pactrain.bench.report import output_prefix
from pactrain.models import check_data
from pactrain.train.config import RunConfig
from pactrain.train.launch import run_training

#: name -> (prune_start, prune_end, prune_initial, send_density).
CANDIDATES: dict[str, tuple[float, float, float, float | None]] = {
    "gradual": (0.1, 0.6, 0.0, None),
    "gradual-send0.1": (0.1, 0.6, 0.0, 0.1),
    "early-send0.1": (0.0, 0.2, 0.0, 0.1),
    "half-at-once-send0.1": (0.0, 0.3, 0.5, 0.1),
    "early-send0.05": (0.0, 0.2, 0.0, 0.05),
    "early-send0.035": (0.0, 0.2, 0.0, 0.035),
    "early-send0.0125": (0.0, 0.2, 0.0, 0.0125),
}


def first_at(curve: list[list[float]], target: float) -> int | None:
    return next((int(step) for _, step, metric in curve if metric >= target), None)


def second_half_mean(curve: list[list[float]], steps: int) -> float | None:
    late = [metric for _, step, metric in curve if step >= steps * 9 // 16]
    return sum(late) / len(late) if late else None


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="fashion-cnn")
    parser.add_argument("--method", default="pactrain-packed")
    parser.add_argument("--candidates", nargs="+", default=list(CANDIDATES),
                        choices=list(CANDIDATES))
    parser.add_argument("--steps", type=int, default=800)
    parser.add_argument("--eval-every", type=int, default=50)
    parser.add_argument("--sparsity", type=float, default=0.9)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--target", type=float, default=0.88)
    parser.add_argument("--out", default="operating-points")
    args = parser.parse_args(argv)
    check_data([args.model], None)
    console, rows = Console(), []
    prefix = output_prefix(args.out)
    with Progress(console=console) as bar:
        task = bar.add_task("candidates", total=len(args.candidates))
        for name in args.candidates:
            start, end, initial, density = CANDIDATES[name]
            bar.update(task, description=name)
            result = run_training(RunConfig(
                model=args.model, method=args.method, workers=4, steps=args.steps,
                batch_size=args.batch_size, seed=args.seed, warmup_steps=0,
                probe_link=False, sparsity=args.sparsity, prune_start=start,
                prune_end=end, prune_initial=initial, eval_every=args.eval_every,
                method_options={} if density is None else {"send_density": density}),
                progress=False, timeout_s=3600)
            curve = result["eval_curve"]
            rows.append({"candidate": name, "prune": [start, end, initial],
                         "send_density": density,
                         "first_step_at_target": first_at(curve, args.target),
                         "second_half_mean": second_half_mean(curve, args.steps),
                         "payload_bytes_per_step": result["payload_bytes_per_step"],
                         "curve": curve})
            console.print(f"{name}: first at {args.target} step "
                          f"{rows[-1]['first_step_at_target']}, second-half mean "
                          f"{rows[-1]['second_half_mean']:.4f}, "
                          f"{rows[-1]['payload_bytes_per_step']:,.0f} B/step")
            prefix.with_suffix(".json").write_text(json.dumps(
                {"args": vars(args), "rows": rows}, indent=2))
            bar.advance(task)
    lines = ["| candidate | prune (start, end, at once) | send_density | first step at "
             f"{args.target} | mean, second half | payload B/step |", "|---|---|---|---|---|---|"]
    for row in rows:
        lines.append(f"| {row['candidate']} | {tuple(row['prune'])} | {row['send_density']} | "
                     f"{row['first_step_at_target'] or '-'} | {row['second_half_mean']:.4f} | "
                     f"{row['payload_bytes_per_step']:,.0f} |")
    prefix.with_suffix(".md").write_text("\n".join(lines) + "\n")
    console.print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
