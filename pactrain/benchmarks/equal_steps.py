"""What PacTrain's pruning and tiers cost per step: the held-out metric at equal steps.

A race (``pactrain bench --time-to-accuracy``) mixes two things: how fast a method steps on
the link, and how much it learns per step. This benchmark isolates the second. Every
method trains the same model from the same seed for ``--steps`` steps on loopback (the link
does not change what a step learns), evaluating the held-out metric every
``--eval-every`` steps (loss per byte for the language models, accuracy for the image
ones); the PacTrain entrants run under each pruning schedule given (fractions of the run:
``default`` is ``attach``'s 0.1-0.6, ``race`` the races' 0.0-0.2). Printed: the metric of
each entrant at every evaluation, and its ratio to dense's at the same step.

Writes ``--out``.json, ``--out``.md and ``--out``.png (metric against step, one line per
entrant). A benchmark, not a test.

    python pactrain/benchmarks/equal_steps.py --model hf-gpt2 --out out/hf-equal-steps
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress

from pactrain.bench.report import output_prefix
from pactrain.compaction import ROUNDINGS
from pactrain.models import check_data
from pactrain.names import METHOD_NAMES, OPTIMIZERS, PRUNE_SCOPES
from pactrain.train.config import RunConfig
from pactrain.train.launch import run_training

#: name -> (prune_start, prune_end) as fractions of the run.
SCHEDULES = {"default": (0.1, 0.6), "race": (0.0, 0.2), "one-shot": (0.0, 0.0)}


#: What a reused dense row must share with this run (``--dense-from``).
REFERENCE_MUST_MATCH = ("model", "steps", "eval_every", "workers", "batch_size", "seed",
                        "optimizer")


def reused_dense(path: str, args: argparse.Namespace) -> dict[str, Any]:
    """The dense row of an earlier run of this benchmark, when it trained what this run's
    dense would (dense ignores every pruning and tier flag, so only these settings count).

    Raises:
        ValueError: unreadable file, no dense row, or a setting that differs.
    """
    try:
        earlier = json.loads(Path(path).read_text())
        row, settings = earlier["rows"][0], earlier["args"]
    except (OSError, ValueError, KeyError, IndexError) as err:
        raise ValueError(f"--dense-from {path}: not a result of this benchmark ({err})") from err
    if row.get("method") != "dense":
        raise ValueError(f"--dense-from {path}: its first row is {row.get('method')!r}, "
                         f"not dense")
    differ = [f"{k} {settings.get(k)!r} there, {getattr(args, k)!r} here"
              for k in REFERENCE_MUST_MATCH if settings.get(k) != getattr(args, k)]
    if differ:
        raise ValueError(f"--dense-from {path}: dense trained differently: "
                         + "; ".join(differ))
    return row


def entrants(args: argparse.Namespace) -> list[tuple[str, RunConfig]]:
    """Dense first (the reference), the unpruned baselines, then every PacTrain method
    under every schedule."""
    base = dict(model=args.model, workers=args.workers, steps=args.steps,
                batch_size=args.batch_size, seed=args.seed, warmup_steps=0,
                probe_link=False, eval_every=args.eval_every, optimizer=args.optimizer)
    out = [("dense", RunConfig(method="dense", sparsity=0.0, **base))]
    out += [(name, RunConfig(method=name, sparsity=0.0, **base)) for name in args.baselines]
    feedback = {"default": [None], "off": [False], "on": [True],
                "both": [False, True]}[args.error_feedback]
    sampling = {} if args.send_density is None else {"send_density": args.send_density}
    for schedule, scope, method, rounding, ef in itertools.product(
            args.schedules, args.scopes, args.methods, args.rounding, feedback):
        if rounding == "nearest" and ef is False:
            continue  # refused: nearest rounding needs its residual
        start, end = SCHEDULES[schedule]
        where = schedule if len(args.scopes) == 1 else f"{schedule}, {scope}"
        tags = "".join(({True: " +EF", False: " -EF"}.get(ef, ""),
                        f" {rounding}" if len(args.rounding) > 1 else ""))
        options = dict(sampling, **({"rounding": rounding} if rounding != "stochastic" else {}))
        out.append((f"{method}{tags} ({where})",
                    RunConfig(method=method, sparsity=args.sparsity, prune_start=start,
                              prune_end=end, prune_scope=scope, error_feedback=ef,
                              method_options=options, **base)))
    return out


def ratios(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each entrant's metric over dense's at every step both evaluated."""
    dense = {step: metric for _, step, metric in rows[0]["curve"]}
    return [{"entrant": r["entrant"],
             "ratio": {step: metric / dense[step] for _, step, metric in r["curve"]
                       if step in dense}} for r in rows[1:]]


def second_half_mean(curve: list[list[float]]) -> float:
    """Mean of the metric over the evaluations of the run's second half: what a step
    learns, less sensitive to one evaluation's noise than any single point."""
    last = curve[-1][1]
    late = [metric for _, step, metric in curve if step > last / 2]
    return sum(late) / len(late)


def first_step_at(curve: list[list[float]], target: float, lower: bool) -> int | None:
    """The first evaluated step whose metric meets ``target``."""
    return next((int(step) for _, step, metric in curve
                 if (metric <= target if lower else metric >= target)), None)


def table(rows: list[dict[str, Any]], metric: str, target: float | None = None) -> list[str]:
    """Markdown: the metric per evaluation step, the last step's ratio to dense, the mean
    over the second half and, with ``target``, the first step that meets it."""
    steps = [step for _, step, _ in rows[0]["curve"]]
    last = {r["entrant"]: r["ratio"].get(steps[-1]) for r in ratios(rows)}
    lower = metric != "test_accuracy"
    head = ["entrant", *[f"step {s}" for s in steps], "vs dense (last)",
            "mean, 2nd half", *([f"first step at {target:g}"] if target is not None else []),
            "payload B/step"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        by_step = {step: m for _, step, m in r["curve"]}
        cells = [f"{by_step[s]:.4f}" if s in by_step else "-" for s in steps]
        ratio = last.get(r["entrant"])
        cells.append("1" if r is rows[0] else ("-" if ratio is None else f"{ratio:.4f}"))
        cells.append(f"{second_half_mean(r['curve']):.4f}")
        if target is not None:
            reached = first_step_at(r["curve"], target, lower)
            cells.append("-" if reached is None else str(reached))
        cells.append(f"{r['payload_bytes_per_step']:,.0f}")
        lines.append("| " + " | ".join([r["entrant"], *cells]) + " |")
    lines.append(f"\n({metric} on held-out data; payload is the run's mean per step)")
    return lines


def plot(rows: list[dict[str, Any]], metric: str, title: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for r in rows:
        style = {"color": "black", "linestyle": "--"} if r is rows[0] else {}
        ax.plot([p[1] for p in r["curve"]], [p[2] for p in r["curve"]], marker="o",
                label=r["entrant"], **style)
    ax.set_xlabel("optimizer step")
    ax.set_ylabel(f"held-out {metric}")
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="hf-gpt2")
    parser.add_argument("--methods", nargs="+",
                        default=["pactrain-fp32", "pactrain-fp16", "pactrain-packed"])
    parser.add_argument("--baselines", nargs="*", default=[], choices=METHOD_NAMES,
                        help="other methods to run unpruned beside dense (e.g. powersgd): "
                             "what they learn per step, against PacTrain's")
    parser.add_argument("--schedules", nargs="+", default=["default", "race"],
                        choices=sorted(SCHEDULES))
    parser.add_argument("--scopes", nargs="+", default=[PRUNE_SCOPES[0]],
                        choices=PRUNE_SCOPES,
                        help="how weights are ranked for pruning (pactrain.pruning)")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--eval-every", type=int, default=50)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=None)
    parser.add_argument("--sparsity", type=float, default=0.8)
    parser.add_argument("--error-feedback", choices=("default", "off", "on", "both"),
                        default="default",
                        help="the PacTrain entrants' residual for the codes' error: each "
                             "setting's default (off unless sampling or nearest rounding), "
                             "off, on, or both off and on")
    parser.add_argument("--rounding", nargs="+", default=["stochastic"], choices=ROUNDINGS,
                        help="how the PacTrain entrants' ternary tiers round (nearest keeps "
                             "its error: error feedback on)")
    parser.add_argument("--send-density", type=float, default=None,
                        help="PacTrain entrants send at most this share of each bucket's "
                             "entries per step (agreed top chunks)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--optimizer", choices=OPTIMIZERS, default=OPTIMIZERS[0],
                        help="every entrant's optimizer (each model's default rate for it)")
    parser.add_argument("--target", type=float, default=None,
                        help="also print the first evaluated step that meets this metric "
                             "(e.g. 0.88 for the Fashion-MNIST races)")
    parser.add_argument("--dense-from", default=None, metavar="JSON",
                        help="reuse the dense reference of an earlier run of this benchmark "
                             "(same model, steps, evaluations, workers, batch, seed and "
                             "optimizer) instead of training it again")
    parser.add_argument("--out", default="pactrain-equal-steps")
    args = parser.parse_args(argv)
    console = Console()
    rows: list[dict[str, Any]] = []
    try:
        check_data([args.model])
        if args.dense_from:
            rows.append(reused_dense(args.dense_from, args))
    except (FileNotFoundError, ValueError) as err:
        console.print(f"error: {err}")
        return 2
    if args.eval_every <= 0 or args.steps % args.eval_every:
        console.print(f"error: --steps {args.steps} must be a multiple of --eval-every "
                      f"{args.eval_every} (> 0), so every entrant ends on an evaluation")
        return 2
    metric = "metric"
    plan = entrants(args)[len(rows):]  # a reused dense row replaces the first entrant
    with Progress(console=console) as progress:
        task = progress.add_task("equal steps", total=len(plan))
        for label, config in plan:
            progress.update(task, description=label)
            result = run_training(config, progress=False)
            metric = result["eval_metric"]
            rows.append({"entrant": label, "method": config.method,
                         "prune": [config.prune_start, config.prune_end],
                         "scope": config.prune_scope,
                         "curve": result["eval_curve"], "density": result["density"],
                         "payload_bytes_per_step": result["payload_bytes_per_step"]})
            console.print(f"{label}: {metric} {result['eval_curve'][-1][2]:.4f} at step "
                          f"{result['eval_curve'][-1][1]}")
            progress.advance(task)
    out = output_prefix(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    Path(f"{out}.json").write_text(json.dumps(
        {"rows": rows, "ratios": ratios(rows), "metric": metric, "args": vars(args)},
        indent=1))
    lines = table(rows, metric, args.target)
    Path(f"{out}.md").write_text("\n".join(lines) + "\n")
    plot(rows, metric, f"{args.model}: held-out {metric} at equal steps "
                       f"(sparsity {args.sparsity:g}, {args.workers} workers)",
         Path(f"{out}.png"))
    console.print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
