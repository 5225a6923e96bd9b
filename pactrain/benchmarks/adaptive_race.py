"""`attach` defaults against hand-tuning and the peers, on shaped links (issue 48).

Each entrant trains the same model from the same seed on ``--workers`` workers, each in its
own network namespace behind a ``tc tbf`` link of ``--bandwidth`` (the bench's topology,
:mod:`pactrain.bench.netns`), for ``--max-steps`` steps without stopping at the target,
evaluating the held-out set every ``--eval-every`` steps with the training clock paused. So
one run gives both the time (and steps) to the target and the best held-out metric after
an equal step budget. Entrants (:data:`ENTRANTS`):

- ``defaults``: ``pactrain.attach(ddp, opt, sparsity=S, total_steps=N)``: no other flag;
  the adaptive method chooses its operating point (:mod:`pactrain.operating_point`);
- ``recipe``: the hand-tuned slow-link recipe of docs/pactrain.md (``pactrain-packed``,
  pruning from step 0 to 0.2 of the run, ``send_density`` 0.05, agreed top chunks);
- ``gradual``: the adaptive method with the fast-link schedule forced (pruning from 0.1
  to 0.6 of the run, nothing at once) and the send budget left to the policy: the best
  configuration found for lm-gpt at equal steps on loopback (docs/pactrain-bench.md,
  "lm-gpt at 10 Mbit/s");
- ``powersgd-r1``, ``-r2``, ``-r4``;
- ``topk`` at density 0.01 (Aji and Heafield, EMNLP 2017, drop 99% of the gradient) and
  ``dgc`` at density 0.001 (Lin et al., ICLR 2018: 99.9% of the gradient held back, after
  its warm-up), with their error feedback and momentum correction: each peer at the
  operating point its paper reports, not at PacTrain's ``1 - S`` (at 0.1 of fashion-cnn
  their values and indices take 5 s a step at 10 Mbit/s);
- ``dense`` (unpruned, sparsity 0: the accuracy reference).

Printed per seed and as medians over the seeds: time and steps to the target, steady
seconds per step, start-up seconds (training time of the first evaluation beyond its
steps at the steady rate), payload bytes per step and the best metric in the step budget;
then each entrant's time to the target divided by the defaults'. Writes ``--out``.json
(curves and table), ``--out``.md and ``--out``.png (metric against training time, one
line per entrant and seed). Runs one entrant at a time: run it alone on the machine.

    sudo .venv/bin/python pactrain/benchmarks/adaptive_race.py --model fashion-cnn \
        --bandwidth 10mbit --seeds 0 1 2 --target 0.88 --out results/adaptive/fashion-10mbit
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from pactrain.bench.config import BenchConfig
from pactrain.bench.report import output_prefix
from pactrain.bench.runner import Curve, race_to_accuracy

#: name -> (method, RunConfig fields set for it). ``sparsity`` None: the race's.
ENTRANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "defaults": ("pactrain", {"prune_start": None, "prune_end": None,
                              "prune_initial": None, "method_options": {}}),
    "recipe": ("pactrain-packed", {"prune_start": 0.0, "prune_end": 0.2, "prune_initial": 0.0,
                                   "method_options": {"send_density": 0.05,
                                                      "send_select": "topk"}}),
    "gradual": ("pactrain", {"prune_start": 0.1, "prune_end": 0.6, "prune_initial": 0.0,
                             "method_options": {}}),
    "powersgd-r1": ("powersgd", {"method_options": {"rank": 1}}),
    "powersgd-r2": ("powersgd", {"method_options": {"rank": 2}}),
    "powersgd-r4": ("powersgd", {"method_options": {"rank": 4}}),
    "topk": ("topk", {"method_options": {"density": 0.01}}),
    "dgc": ("dgc", {"method_options": {"density": 0.001}}),
    "dense": ("dense", {"sparsity": 0.0}),
}


def crossing(points: list[list[float]], target: float, lower: bool) -> tuple[float, int] | None:
    """(training s, step) of the first evaluation at or past ``target``."""
    for seconds, step, metric in points:
        if (metric <= target) if lower else (metric >= target):
            return seconds, int(step)
    return None


def steady_and_startup(points: list[list[float]]) -> tuple[float | None, float | None]:
    """Seconds per step between the first and the last evaluation, and the training time
    of the first evaluation beyond its steps at that rate (start-up: probes, the first
    steps without a budget, DDP's rebuild)."""
    if len(points) < 2:
        return None, None
    (s0, k0, _), (s1, k1, _) = points[0], points[-1]
    steady = (s1 - s0) / (k1 - k0) if k1 > k0 else None
    return steady, (None if steady is None else s0 - steady * k0)


def row_of(name: str, seed: int, curve: Curve, target: float, lower: bool) -> dict[str, Any]:
    points = [list(p) for p in curve.points]
    reached = crossing(points, target, lower)
    steady, startup = steady_and_startup(points)
    metrics = [p[2] for p in points]
    best = (min(metrics) if lower else max(metrics)) if metrics else None
    return {"entrant": name, "method": curve.method, "seed": seed,
            "time_to_target_s": None if reached is None else reached[0],
            "steps_to_target": None if reached is None else reached[1],
            "steady_s_per_step": steady, "startup_s": startup,
            "payload_bytes_per_step": curve.payload_bytes_per_step,
            "wire_bytes_per_step": curve.wire_bytes_per_step,
            "control_bytes_per_step": curve.control_bytes_per_step,
            "best_metric": best, "steps_run": points[-1][1] if points else 0,
            "operating_point": curve.operating_point, "error": curve.error, "points": points}


def median_of(rows: list[dict[str, Any]], key: str) -> float | None:
    """The median over seeds, a seed without a value counting as slower than any with one
    (a missed target is a miss, not left out); ``None`` when the median itself is one."""
    values = sorted(float("inf") if r[key] is None else r[key] for r in rows)
    if not values:
        return None
    middle = statistics.median_low(values) if len(values) % 2 == 0 else statistics.median(values)
    return None if middle == float("inf") else middle


def summary(rows: list[dict[str, Any]], entrants: list[str]) -> list[dict[str, Any]]:
    out = []
    base = median_of([r for r in rows if r["entrant"] == "defaults"], "time_to_target_s")
    for name in entrants:
        mine = [r for r in rows if r["entrant"] == name]
        line = {"entrant": name, "seeds": len(mine)}
        for key in ("time_to_target_s", "steps_to_target", "steady_s_per_step", "startup_s",
                    "payload_bytes_per_step", "best_metric"):
            line[key] = median_of(mine, key)
        t = line["time_to_target_s"]
        line["defaults_over_this"] = None if base is None or t is None else base / t
        out.append(line)
    return out


def _fmt(value: Any, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def markdown(lines: list[dict[str, Any]], metric: str) -> str:
    head = ("| entrant | seeds | time to target (s) | steps | steady s/step | start-up s | "
            f"payload B/step | best {metric} | defaults / entrant |")
    rows = [head, "|" + "---|" * 9]
    for line in lines:
        rows.append("| " + " | ".join([
            line["entrant"], str(line["seeds"]), _fmt(line["time_to_target_s"], ".1f"),
            _fmt(line["steps_to_target"], ".0f"), _fmt(line["steady_s_per_step"], ".3f"),
            _fmt(line["startup_s"], ".1f"), _fmt(line["payload_bytes_per_step"], ",.0f"),
            _fmt(line["best_metric"], ".4f"), _fmt(line["defaults_over_this"], ".2f") + "x",
        ]) + " |")
    return "\n".join(rows) + "\n"


def plot(rows: list[dict[str, Any]], metric: str, target: float, title: str,
         path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    colors: dict[str, Any] = {}
    for row in rows:
        if not row["points"]:
            continue
        color = colors.setdefault(row["entrant"], f"C{len(colors)}")
        xs = [p[0] for p in row["points"]]
        ys = [p[2] for p in row["points"]]
        label = row["entrant"] if row["seed"] == min(
            r["seed"] for r in rows if r["entrant"] == row["entrant"]) else None
        ax.plot(xs, ys, color=color, marker=".", alpha=0.8, label=label)
    ax.axhline(target, color="grey", linestyle="--", linewidth=1)
    ax.set_xlabel("training time (s)")
    ax.set_ylabel(metric)
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def report(rows: list[dict[str, Any]], args: argparse.Namespace, metric: str,
           entrants: list[str], console: Console) -> None:
    """Print the medians, and write ``--out``'s JSON, markdown table and plot."""
    lines = summary(rows, entrants)
    seeds = sorted({r["seed"] for r in rows})
    table = Table(title=f"{args.model} at {args.bandwidth}, medians of seeds {seeds}")
    for column in ("entrant", "to target s", "steps", "s/step", "start-up s", "B/step",
                   "best", "defaults/entrant"):
        table.add_column(column)
    for line in lines:
        table.add_row(line["entrant"], _fmt(line["time_to_target_s"], ".1f"),
                      _fmt(line["steps_to_target"], ".0f"),
                      _fmt(line["steady_s_per_step"], ".3f"), _fmt(line["startup_s"], ".1f"),
                      _fmt(line["payload_bytes_per_step"], ",.0f"),
                      _fmt(line["best_metric"], ".4f"),
                      _fmt(line["defaults_over_this"], ".2f"))
    console.print(table)
    prefix = output_prefix(args.out)
    prefix.with_suffix(".json").write_text(json.dumps(
        {"args": vars(args), "rows": rows, "summary": lines}, indent=2, default=str))
    prefix.with_suffix(".md").write_text(markdown(lines, metric))
    plot(rows, metric, args.target, f"{args.model}, {args.workers} workers at {args.bandwidth}",
         prefix.with_suffix(".png"))
    console.print(f"wrote {prefix}.json, .md and .png")


def summarize(args: argparse.Namespace) -> int:
    """``--summarize``: join earlier results and report them."""
    rows: dict[tuple[str, int], dict[str, Any]] = {}
    entrants: list[str] = []
    for path in args.summarize:
        for row in json.loads(Path(path).read_text())["rows"]:
            rows[(row["entrant"], row["seed"])] = row
            if row["entrant"] not in entrants:
                entrants.append(row["entrant"])
    from pactrain.models import get_model

    report(list(rows.values()), args, get_model(args.model).primary_metric, entrants,
           Console())
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="fashion-cnn")
    parser.add_argument("--model-module", action="append", default=[],
                        help="A file registering a model of your own (e.g. "
                        "pactrain/benchmarks/heldout_model.py); repeatable.")
    parser.add_argument("--bandwidth", default="10mbit")
    parser.add_argument("--entrants", nargs="+", default=["defaults", "recipe", "powersgd-r4"],
                        choices=sorted(ENTRANTS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--sparsity", type=float, default=0.9)
    parser.add_argument("--target", type=float, default=0.88)
    parser.add_argument("--max-steps", type=int, default=800)
    parser.add_argument("--eval-every", type=int, default=50)
    parser.add_argument("--budget", type=float, default=None,
                        help="Training seconds an entrant may spend (default: none).")
    parser.add_argument("--out", default="adaptive-race")
    parser.add_argument("--summarize", nargs="+", default=None, metavar="JSON",
                        help="Run nothing: join the rows of these results of this script "
                        "(a later row replaces an earlier one of the same entrant and "
                        "seed) and write --out's table and plot.")
    args = parser.parse_args(argv)
    if args.model_module:
        from pactrain.models import add_model_modules

        add_model_modules(args.model_module)
    if args.summarize:
        return summarize(args)

    from pactrain.bench.network import bench_network
    from pactrain.models import check_data, get_model

    check_data([args.model], None)
    spec = get_model(args.model)
    lower = spec.primary_metric == "test_loss"
    console = Console()
    base = BenchConfig(models=[args.model], methods=["pactrain"], bandwidths=[args.bandwidth],
                       workers=args.workers, sparsity=args.sparsity,
                       tta_max_steps=args.max_steps, tta_eval_every=args.eval_every,
                       tta_batch_size=args.batch_size, tta_budget_s=args.budget,
                       compute_floor=False)
    prefix = output_prefix(args.out)
    rows: list[dict[str, Any]] = []
    with bench_network(args.workers, True) as network, Progress(console=console) as bar:
        if not network.throttled:
            console.print(f"[bold red]UNTHROTTLED[/]: {network.reason}")
        task = bar.add_task("race", total=len(args.seeds) * len(args.entrants))
        for seed in args.seeds:
            for name in args.entrants:
                method, fields = ENTRANTS[name]
                bar.update(task, description=f"seed {seed} {name}")
                config = BenchConfig(**{**base.to_dict(), "seed": seed})
                curve = race_to_accuracy(config, args.model, method, network, args.bandwidth,
                                         target=args.target, metric=spec.primary_metric,
                                         overrides={**fields, "target_metric": None})
                rows.append(row_of(name, seed, curve, args.target, lower))
                last = rows[-1]
                console.print(f"seed {seed} {name}: to target "
                              f"{_fmt(last['time_to_target_s'], '.1f')} s "
                              f"(step {last['steps_to_target']}), "
                              f"{_fmt(last['steady_s_per_step'], '.3f')} s/step, best "
                              f"{_fmt(last['best_metric'], '.4f')}"
                              + (f" [red]{last['error'][:200]}[/]" if last["error"] else ""))
                for line in (last["operating_point"] or {}).get("reasons", []):
                    console.print(f"  policy: {line}")
                prefix.with_suffix(".json").write_text(json.dumps(
                    {"args": vars(args), "rows": rows}, indent=2, default=str))
                bar.advance(task)
    report(rows, args, spec.primary_metric, args.entrants, console)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
