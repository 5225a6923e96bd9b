"""Every method side by side on real throttled links: the issue's target, measured in one run.

Presets (``--preset``):

- ``target`` (default): resnet18 on the real digits, 4 workers, 100 Mbit/s, batch 8 per
  worker, sparsity 0.9, every method (PowerSGD at ranks 1, 2 and 4) plus the compute
  floor, ``--repeats`` passes with the method order rotated; then the time-to-accuracy
  race to 95% test accuracy at 100 Mbit/s (each entrant one run at the model's default
  batch of 32 per worker, evaluated every 5 steps, stopped at the target or after 180 s of
  training; the methods that prune do so once, at step 0: on loopback dense training
  reaches 95% near step 60, too early for a gradual schedule to matter).
  Prints the table and the issue's targets: PacTrain >= 1.0x PowerSGD rank 4 and >= 3x
  dense in samples/s, wire within 1.10x of payload x 2(N-1)/N, time to accuracy <= 0.8x
  every other method's.
- ``grid``: every method at 1 Gbit/s and 100 Mbit/s (``--repeats`` passes) and at
  10 Mbit/s (one pass of 5 steps: dense resnet18 takes about a minute a step there), then
  the race at 100 Mbit/s (every method) and at 10 Mbit/s (PacTrain, PowerSGD at ranks 1,
  2 and 4, TernGrad and dense as the anchor; fp16, top-k and DGC move 10-35 MB a step
  there and cannot train in the budget). Sparsity 0.9 for the methods that prune and
  density 0.1 for top-k and DGC. Training budget 180 s per entrant. Prints where each
  method wins, per bandwidth.
- ``quick``: resnet18, dense/powersgd/pactrain, 2 workers, 100 Mbit/s, 6 steps.

Writes ``--out``.json, ``--out``.png and ``--out``.md (the Markdown table). Run as root
for throttled links; without root everything runs on loopback and says so.
This is a benchmark, not a test: the machine is shared and noisy, so only the ratios
inside one run mean something.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from pactrain.bench.config import BenchConfig
from pactrain.bench.report import (
    markdown_table,
    output_prefix,
    rich_table,
    summarize,
    write_json,
)
from pactrain.bench.runner import run_bench
from pactrain.plots import plot_bench

ALL_METHODS = ["dense", "fp16", "powersgd-r1", "powersgd-r2", "powersgd", "topk", "dgc",
               "terngrad", "pactrain"]
CHEAP_BASELINES = ("fp16", "topk", "dgc", "terngrad")
POWERSGD = ("powersgd-r1", "powersgd-r2", "powersgd")
RACE_METHODS = ["pactrain", "powersgd-r1", "powersgd-r2", "powersgd", "terngrad", "fp16",
                "dense", "topk", "dgc"]
SLOW_LINK_RACE = ["pactrain", "powersgd-r1", "powersgd-r2", "powersgd", "terngrad", "dense"]


def presets(repeats: int) -> dict[str, list[BenchConfig]]:
    race = dict(time_to_accuracy=0.95, tta_max_steps=300, tta_eval_every=5,
                tta_budget_s=180.0, tta_prune_end=0.0)
    return {
        "target": [
            BenchConfig(models=["resnet18"], methods=ALL_METHODS, bandwidths=["100mbit"],
                        workers=4, batch_size=8, steps=12, warmup_steps=4, sparsity=0.9,
                        repeats=repeats),
            BenchConfig(models=["resnet18"], methods=RACE_METHODS, bandwidths=["100mbit"],
                        workers=4, batch_size=8, steps=6, warmup_steps=2, sparsity=0.9,
                        compute_floor=False, **race),
        ],
        "grid": [
            BenchConfig(models=["resnet18"], methods=ALL_METHODS,
                        bandwidths=["1gbit", "100mbit"], workers=4, batch_size=8,
                        steps=8, warmup_steps=3, sparsity=0.9, repeats=repeats),
            BenchConfig(models=["resnet18"], methods=ALL_METHODS, bandwidths=["10mbit"],
                        workers=4, batch_size=8, steps=5, warmup_steps=2, sparsity=0.9,
                        repeats=1),
            BenchConfig(models=["resnet18"], methods=RACE_METHODS, bandwidths=["100mbit"],
                        workers=4, batch_size=8, steps=6, warmup_steps=2, sparsity=0.9,
                        compute_floor=False, **race),
            BenchConfig(models=["resnet18"], methods=SLOW_LINK_RACE, bandwidths=["10mbit"],
                        workers=4, batch_size=8, steps=6, warmup_steps=2, sparsity=0.9,
                        compute_floor=False, **race),
        ],
        "quick": [
            BenchConfig(models=["resnet18"], methods=["dense", "powersgd", "pactrain"],
                        bandwidths=["100mbit"], workers=2, batch_size=8, steps=6,
                        warmup_steps=2, sparsity=0.8),
        ],
    }


def target_report(rows: list[dict[str, Any]], curves: list[dict[str, Any]],
                  bandwidth: str = "100mbit") -> list[str]:
    """The issue's targets at ``bandwidth``, each as measured / required."""
    lines = {(r["model"], r["method"]): r for r in summarize(rows)
             if r["bandwidth"] == bandwidth}

    def speed(method: str) -> float | None:
        line = lines.get(("resnet18", method))
        return line["samples_per_s"] if line else None

    out = []
    pac = speed("pactrain")
    if pac is not None:
        checks = [("dense", 3.0, speed("dense")), ("powersgd (rank 4)", 1.0, speed("powersgd"))]
        cheap = {m: speed(m) for m in CHEAP_BASELINES if speed(m)}
        if cheap:
            best = max(cheap, key=lambda m: cheap[m] or 0.0)
            checks.append((f"best of fp16/topk/dgc/terngrad ({best})", 1.25, cheap[best]))
        for name, need, other in checks:
            if other:
                ratio = pac / other
                verdict = "met" if ratio >= need else f"short by {100 * (1 - ratio / need):.0f}%"
                out.append(f"resnet18 {bandwidth} samples/s, pactrain / {name}: {ratio:.2f}x "
                           f"(target >= {need}x): {verdict}")
        line = lines[("resnet18", "pactrain")]
        row = next(r for r in rows if r["method"] == "pactrain" and r["bandwidth"] == bandwidth
                   and r.get("payload_bytes_per_step"))
        ring = 2 * (row["workers"] - 1) / row["workers"]
        if line.get("wire_bytes_per_step"):
            ideal = line["payload_bytes_per_step"] * ring
            overhead = line["wire_bytes_per_step"] / ideal
            floor = next((r["wire_bytes_per_step"] for r in summarize(rows)
                          if r["method"] == "no-comm" and r.get("wire_bytes_per_step")
                          is not None), None)  # the same at every bandwidth
            if floor is not None:
                # what the harness sends with no gradients at all (DDP's broadcast of
                # BatchNorm buffers from rank 0 every forward), measured in this run
                gradient = (line["wire_bytes_per_step"] - floor) / ideal
                out.append(f"gradient wire / (payload x 2(N-1)/N): {gradient:.3f} "
                           f"(target <= 1.10): {'met' if gradient <= 1.10 else 'missed'}; "
                           f"with the {floor / 1e3:.0f} KB/step every method sends outside "
                           f"the hook (no-comm row): {overhead:.3f}")
            else:
                out.append(f"wire / (payload x 2(N-1)/N): {overhead:.3f} (target <= 1.10): "
                           f"{'met' if overhead <= 1.10 else 'missed'}")
    race = [c for c in curves if c["bandwidth"] == bandwidth and c["model"] == "resnet18"]
    mine = next((c for c in race if c["method"] == "pactrain"), None)
    if mine and mine.get("reached_s"):
        for other in race:
            if other is mine:
                continue
            if other.get("reached_s"):
                ratio = mine["reached_s"] / other["reached_s"]
                what = f"{ratio:.2f}x"
            elif other["points"]:
                ratio = mine["reached_s"] / other["points"][-1][0]  # it had not reached yet
                what = f"<= {ratio:.2f}x (not reached in {other['points'][-1][0]:.0f} s)"
            else:
                continue
            out.append(f"time to {100 * race_target(curves):.0f}% {bandwidth}, pactrain / "
                       f"{other['method']}: {what} (target <= 0.8x): "
                       f"{'met' if ratio <= 0.8 else 'missed'}")
    elif mine:
        out.append(f"time to accuracy {bandwidth}: pactrain did not reach the target")
    return out


def wins_report(rows: list[dict[str, Any]], curves: list[dict[str, Any]]) -> list[str]:
    """Per bandwidth: the fastest method in samples/s and the first to the target, with
    every other method's ratio to it (the compute floor left out)."""
    out = []
    lines = [r for r in summarize(rows) if r["method"] != "no-comm" and r.get("samples_per_s")]
    for bandwidth in dict.fromkeys(r["bandwidth"] for r in lines):
        here = sorted((r for r in lines if r["bandwidth"] == bandwidth),
                      key=lambda r: -r["samples_per_s"])
        best = here[0]["samples_per_s"]
        out.append(f"{bandwidth} samples/s: " + ", ".join(
            f"{r['method']} {r['samples_per_s']:.1f}" + ("" if r is here[0] else
                                                          f" ({r['samples_per_s'] / best:.2f}x)")
            for r in here))
    for bandwidth in dict.fromkeys(c["bandwidth"] for c in curves):
        race = [c for c in curves if c["bandwidth"] == bandwidth]
        reached = sorted((c for c in race if c.get("reached_s")), key=lambda c: c["reached_s"])
        missed = [c for c in race if not c.get("reached_s")]
        if not reached:
            out.append(f"{bandwidth} time to {100 * race_target(curves):.0f}%: nobody reached it")
            continue
        first = reached[0]["reached_s"]
        out.append(f"{bandwidth} time to {100 * race_target(curves):.0f}%: " + ", ".join(
            f"{c['method']} {c['reached_s']:.1f} s (step {c['reached_step']}"
            + (")" if c is reached[0] else f", {c['reached_s'] / first:.2f}x)")
            for c in reached) + "".join(
            f"; {c['method']} not reached" + (f" ({100 * c['points'][-1][2]:.1f}% after "
                                              f"{c['points'][-1][0]:.0f} s)" if c["points"]
                                              else "") for c in missed))
    return out


def race_target(curves: list[dict[str, Any]]) -> float:
    return next((c.get("target") for c in curves if c.get("target")), 0.95)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", choices=["target", "grid", "quick"], default="target")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", default="pactrain-bench")
    parser.add_argument("--report-only", action="store_true",
                        help="rebuild the table, targets and plots from --out.json")
    args = parser.parse_args(argv)
    console = Console(width=150)
    rows: list[dict[str, Any]] = []
    curves: list[dict[str, Any]] = []
    environment: dict[str, Any] = {}
    out = output_prefix(args.out)
    if args.report_only:
        saved = json.loads(Path(f"{out}.json").read_text())
        rows, curves, environment = saved["rows"], saved.get("curves", []), saved["environment"]
    for config in [] if args.report_only else presets(args.repeats)[args.preset]:
        done = list(rows)

        def save_partial(new: list[dict[str, Any]], done: list = done) -> None:
            write_json(Path(f"{out}.json"), done + new, {"partial": True})

        document = run_bench(config, console=console, on_row=save_partial)
        rows += document["rows"]
        curves += document["curves"]
        environment = document["environment"]
        write_json(Path(f"{out}.json"), rows, {"partial": True}, curves)
    environment.setdefault("preset", args.preset)
    console.print(rich_table(rows, title=f"pactrain bench ({args.preset})"))
    report = target_report(rows, curves) + wins_report(rows, curves)
    for line in report:
        console.print(line)
    document = write_json(Path(f"{out}.json"), rows, environment, curves)
    plot_bench(document, Path(f"{out}.png"))
    Path(f"{out}.md").write_text(markdown_table(rows) + "\n\n" +
                                      "\n".join(f"- {t}" for t in report) + "\n")
    console.print(f"wrote {out}.json, {out}.png, {out}.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
