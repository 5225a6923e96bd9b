"""Read the races of ``pactrain bench`` (its JSON) and print what a reader needs, per race.

For each (model, bandwidth) race, per method: time and steps to the target, the best held-out
metric within the budget, payload per step over the race, the steady-state step time (the
median seconds per step over the second half of the race's own curve; the throughput
grid's short run beside it) and the fixed start-up cost that the race paid on top of it
(``reached_s - reached_step x step_s``: PowerSGD's uncompressed warm-up, DGC's density
warm-up, the pruning schedule's denser first steps, the link probe; noise of a few
seconds either way on this shared machine), then the
issue's targets: PacTrain's time to the target against every other method's (<= 0.8x), and
its best metric against dense's.

A language-model race may run with no reachable target (``--time-to-loss 0``): then the
target is dense's held-out loss at step ``--at-step`` (default: dense's last evaluation),
and each method's time to it is read off its curve (the first evaluation at or below it).

A race where no entrant reached the target still says who got where first: ``--target X``
reads every method's time to X off its curve instead, and ``--common-target`` takes the
level every entrant of the race reached (the lowest best accuracy, or the highest best
loss). ``--pool`` judges several files of the same model and link as one race (entrants
raced in separate runs on the same machine, e.g. PowerSGD's other ranks).

    python pactrain/benchmarks/race_report.py out/fashion-race-100mbit.json --md out/a.md
    python pactrain/benchmarks/race_report.py r4.json r1r2.json --pool --common-target
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path
from typing import Any

from pactrain.bench.report import shown_method

PACTRAIN_PREFIX = "pactrain"


def first_reaching(points: list[list[float]], target: float, lower: bool
                   ) -> tuple[float, int] | None:
    """(seconds, step) of the first evaluation that meets ``target``."""
    for seconds, step, value in points:
        if (value <= target) if lower else (value >= target):
            return seconds, int(step)
    return None


def steady_step_s(points: list[list[float]]) -> float | None:
    """Seconds per step in the race's second half (median over its evaluation intervals):
    the steady state, after every warm-up, measured in the same run as the race."""
    late = points[len(points) // 2:]
    rates = [(b[0] - a[0]) / (b[1] - a[1]) for a, b in itertools.pairwise(late)
             if b[1] > a[1]]
    if not rates:
        return None
    rates.sort()
    return rates[len(rates) // 2]


def race_rows(document: dict[str, Any], at_step: int | None,
              race: str = "", targets: dict[tuple[str, str], float] | None = None,
              ) -> list[dict[str, Any]]:
    """One row per curve, with derived columns (see the module docstring); ``race`` names
    the run (its file), so races of the same model and link in several files are judged
    apart; ``targets`` replaces the target of the (model, bandwidth) races it names."""
    step_s = {(r["model"], r["bandwidth"], r["method"]): r.get("step_s")
              for r in document["rows"] if r.get("step_s")}
    floor = {r["model"]: r.get("step_s") for r in document["rows"]
             if r["method"] == "no-comm" and r.get("step_s")}
    # curves carry their sparsity since 2026-12-06; older files only in the bench's config
    sparsity = (document.get("environment") or {}).get("config", {}).get("sparsity")
    out = []
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for curve in document.get("curves") or []:
        groups.setdefault((curve["model"], curve["bandwidth"]), []).append(curve)
    for (model, bandwidth), curves in groups.items():
        lower = curves[0].get("metric", "test_accuracy") != "test_accuracy"
        forced = (targets or {}).get((model, bandwidth))
        target = curves[0].get("target") if forced is None else forced
        dense = next((c for c in curves if c["method"] == "dense"), None)
        if (forced is None and lower and (target is None or target <= 0) and dense
                and dense["points"]):
            # no reachable target was set: dense's held-out loss at step N is the target
            pts = [p for p in dense["points"] if at_step is None or p[1] <= at_step]
            target = pts[-1][2]
        for curve in curves:
            pts = curve["points"]
            reached = first_reaching(pts, target, lower) if target is not None else None
            values = [p[2] for p in pts]
            best = (min(values) if lower else max(values)) if values else None
            grid_step = step_s.get((model, bandwidth, curve["method"]))
            steady = steady_step_s(pts)
            row = {"race": race, "model": model, "bandwidth": bandwidth,
                   "method": curve["method"], "sparsity": curve.get("sparsity", sparsity),
                   "metric": "held-out loss" if lower else "test accuracy",
                   "target": target, "reached_s": reached[0] if reached else None,
                   "reached_step": reached[1] if reached else None, "best": best,
                   "steps_run": pts[-1][1] if pts else 0,
                   "trained_s": pts[-1][0] if pts else None,
                   "payload_mb_per_step": (curve.get("payload_bytes_per_step") or 0) / 1e6,
                   "step_s": steady, "grid_step_s": grid_step,
                   "compute_floor_s": floor.get(model),
                   "error": curve.get("error")}
            row["startup_s"] = (row["reached_s"] - row["reached_step"] * steady
                                if reached and steady else None)
            out.append(row)
    return out


def what_the_target_needs(ours: dict[str, Any], rival: dict[str, Any],
                          ratio: float = 0.8) -> str | None:
    """What ``ours`` would need for ``ratio`` x ``rival``'s time, split the way the race
    spends it (time = start-up + steps x steady step): the last step by which it must show
    the target at its own start-up and steady step, and the steady step it would need at
    its own step count; ``None`` when a row lacks either measurement.

    Why: a missed target is two questions, learning per step and time per step, and this
    says which one decides, with the compute floor (nothing sent) as the lowest step time
    any method can reach on this machine.
    """
    steady, startup = ours["step_s"], ours["startup_s"]
    if not steady or startup is None or ours["reached_step"] is None:
        return None
    budget = ratio * rival["reached_s"]
    steps_allowed = (budget - max(startup, 0.0)) / steady
    step_needed = (budget - max(startup, 0.0)) / ours["reached_step"]
    floor = ours.get("compute_floor_s")
    below = (f", {'below' if step_needed < floor else 'above'} the compute floor of "
             f"{floor:.3f} s" if floor else "")
    return (f"{ratio:g}x {rival['method']} is {budget:.1f} s: at its steady {steady:.3f} s/step "
            f"and {max(startup, 0.0):.1f} s start-up {ours['method']} would have to show the "
            f"target by step {max(steps_allowed, 0.0):.0f} (it showed it at step "
            f"{ours['reached_step']}, {rival['method']} at step {rival['reached_step']}), or, "
            f"with the same start-up, step at {step_needed:.3f} s over its "
            f"{ours['reached_step']} steps{below}.")


def by_race(rows: list[dict[str, Any]]) -> dict[tuple[str, str, str], list[dict[str, Any]]]:
    """The rows grouped per race: (race, model, bandwidth), in order of appearance."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["race"], row["model"], row["bandwidth"]), []).append(row)
    return groups


def common_targets(rows: list[dict[str, Any]]) -> dict[tuple[str, str, str], float]:
    """Per (race, model, bandwidth): the level every entrant reached, the lowest best
    accuracy (the highest best loss); races where some entrant has no point are left out."""
    out = {}
    for key, group in by_race(rows).items():
        bests = [r["best"] for r in group]
        if bests and all(b is not None for b in bests):
            lower = group[0]["metric"] != "test accuracy"
            out[key] = max(bests) if lower else min(bests)
    return out


def verdicts(rows: list[dict[str, Any]]) -> list[str]:
    """The issue's targets, per race, as sentences computed from the rows."""
    lines = []
    groups = by_race(rows)
    several = len({race for race, _, _ in groups}) > 1
    for (race, model, bandwidth), group in groups.items():
        ours = [r for r in group if r["method"].startswith(PACTRAIN_PREFIX)
                and r["reached_s"] is not None]
        others = [r for r in group if not r["method"].startswith(PACTRAIN_PREFIX)
                  and r["reached_s"] is not None]
        target = group[0]["target"]
        level = ("" if target is None else f" ({100 * target:.2f}%)"
                 if group[0]["metric"] == "test accuracy" else f" ({target:.4f})")
        where = f"{model} at {bandwidth}" + (f" ({race})" if several else "")
        if not ours:
            lines.append(f"{where}: no PacTrain method reached the target{level} within the "
                         "budget.")
            continue
        best = min(ours, key=lambda r: r["reached_s"])
        if others:
            rival = min(others, key=lambda r: r["reached_s"])
            ratio = best["reached_s"] / rival["reached_s"]
            verdict = "met" if ratio <= 0.8 else "missed"
            lines.append(f"{where}: {best['method']} reached the target{level} in "
                         f"{best['reached_s']:.1f} s, {ratio:.2f}x the fastest other method "
                         f"({rival['method']}, {rival['reached_s']:.1f} s): target <= 0.8x "
                         f"{verdict}.")
            needs = what_the_target_needs(best, rival) if verdict == "missed" else None
            if needs:
                lines.append(f"{where}: {needs}")
        else:
            lines.append(f"{where}: {best['method']} reached the target{level} in "
                         f"{best['reached_s']:.1f} s; no other method reached it in the "
                         "budget.")
        dense = next((r for r in group if r["method"] == "dense"), None)
        if dense and dense["best"] is not None and best["best"] is not None:
            accuracy = dense["metric"] == "test accuracy"
            gap = (100 * (best["best"] - dense["best"]) if accuracy
                   else 100 * (best["best"] / dense["best"] - 1))
            unit = "points" if accuracy else "% of dense's loss"
            lines.append(f"{where}: best {dense['metric']} within the budget {best['method']} "
                         f"{best['best']:.4f} vs "
                         f"{shown_method('dense', dense.get('sparsity'))} "
                         f"{dense['best']:.4f} ({gap:+.2f} {unit}"
                         f"; dense ran {dense['steps_run']} steps in its budget).")
    return lines


def markdown(rows: list[dict[str, Any]]) -> str:
    """The rows as a Markdown table."""
    def fmt(value: Any, spec: str) -> str:
        return "-" if value is None else format(value, spec)

    head = ("| model | bandwidth | method | time to target (s) | steps to target | best "
            "metric | steps run | payload MB/step | steady s/step | grid s/step | start-up s |")
    lines = [head, "|" + "---|" * 11]
    several_files = len({r.get("file") for r in rows}) > 1
    for r in rows:
        best = (fmt(100 * r["best"], ".2f") + "%" if r["metric"] == "test accuracy"
                and r["best"] is not None else fmt(r["best"], ".4f"))
        model = f"{r['model']} ({r['file']})" if several_files else r["model"]
        lines.append(f"| {model} | {r['bandwidth']} | "
                     f"{shown_method(r['method'], r.get('sparsity'))} | "
                     f"{fmt(r['reached_s'], '.1f')} | {fmt(r['reached_step'], 'd')} | {best} | "
                     f"{r['steps_run']} | {r['payload_mb_per_step']:.3f} | "
                     f"{fmt(r['step_s'], '.3f')} | {fmt(r['grid_step_s'], '.3f')} | "
                     f"{fmt(r['startup_s'], '.1f')} |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--at-step", type=int, default=None)
    parser.add_argument("--md", type=Path, default=None)
    level = parser.add_mutually_exclusive_group()
    level.add_argument("--target", type=float, default=None,
                       help="read every method's time to this metric off its curve")
    level.add_argument("--common-target", action="store_true",
                       help="the target is the level every entrant of the race reached")
    parser.add_argument("--pool", action="store_true",
                        help="judge all files of the same model and link as one race")
    args = parser.parse_args(argv)
    documents = [(path.stem, json.loads(path.read_text())) for path in args.files]

    def read(targets: dict[tuple[str, str, str], float] | None) -> list[dict[str, Any]]:
        rows = []
        for stem, document in documents:
            race = "" if args.pool else stem
            mine = ({(m, b): t for (r, m, b), t in targets.items() if r == race}
                    if targets is not None else None)
            for row in race_rows(document, args.at_step, race, mine):
                row["file"] = stem
                rows.append(row)
        return rows

    rows = read(None)
    if args.target is not None and args.target > 1 and any(
            r["metric"] == "test accuracy" for r in rows):
        parser.error(f"--target {args.target:g}: accuracies are fractions (0.85 for 85%)")
    if args.target is not None:
        rows = read({(r["race"], r["model"], r["bandwidth"]): args.target for r in rows})
    elif args.common_target:
        rows = read(common_targets(rows))
    text = markdown(rows) + "\n\n" + "\n".join(f"- {line}" for line in verdicts(rows)) + "\n"
    print(text)
    if args.md:
        args.md.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
