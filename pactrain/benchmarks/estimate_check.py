"""`pactrain estimate` against measured step times on this machine (issue 50's target:
within 20% for every method on 2 models x {2, 4 workers} x {10, 100 Mbit/s}).

For each worker count: calibrate as ``pactrain estimate`` does (each model's compute by
``no-comm`` workers on loopback, the local costs on one thread, the collective latency on
loopback: :mod:`pactrain.estimate.calibrate`), predict every method's step at every
bandwidth, then measure the same grid with ``pactrain bench``'s runner (real workers, each
in its own network namespace behind a ``tc tbf`` link, pruned at step 0 so every timed
step is in the steady state the estimate prices). Prints predicted and measured seconds
per step side by side with their ratio, and writes ``--out``.json, .md and .png
(predicted against measured). Run it alone on the machine, as root.

    sudo .venv/bin/python pactrain/benchmarks/estimate_check.py \\
        --out pactrain/benchmarks/results/estimate/check
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from pactrain.bench.config import BenchConfig
from pactrain.bench.report import output_prefix
from pactrain.bench.runner import run_bench
from pactrain.costs import LinkModel
from pactrain.estimate import Context, Options, estimate, job_of_model
from pactrain.estimate.calibrate import measure_alpha_s, measure_compute_s, measure_local_costs
from pactrain.rates import parse_rate

METHODS = ("dense", "fp16", "powersgd", "topk", "dgc", "pactrain", "pactrain-fp32",
           "pactrain-packed")


def calibrated(models: list[str], workers: int, args: argparse.Namespace,
               console: Console) -> dict[str, Any]:
    """The estimate's inputs for ``workers``, measured here."""
    console.print(f"calibrating {workers} workers: latency, local costs, compute")
    alpha = measure_alpha_s(workers)
    costs = measure_local_costs(workers)
    compute = {m: measure_compute_s(m, workers, args.batch_size, args.sparsity)
               for m in models}
    return {"alpha_s": alpha, "costs": costs, "compute_s": compute}


def probed_links(workers: int, bandwidths: list[str], console: Console,
                 ) -> dict[str, dict[str, list[float]]]:
    """Each bandwidth's all-reduce and all-gather (alpha, beta), fitted by the workers in
    the bench's namespaces (:mod:`pactrain.bench.link_probe`)."""
    from pactrain.bench.link_probe import probe_shaped_link
    from pactrain.bench.network import bench_network

    links = {}
    with bench_network(workers) as network:
        for bandwidth in bandwidths:
            probed = probe_shaped_link(network, workers, bandwidth)
            ring, gather = probed.efficiency(parse_rate(bandwidth))
            console.print(f"{workers} workers, {bandwidth}: the all-reduce gets {ring:.2f} of "
                          f"the rate, the all-gather {gather:.2f}")
            links[bandwidth] = {"ring": [probed.ring.alpha_s, probed.ring.beta_s_per_byte],
                                "gather": [probed.gather.alpha_s,
                                           probed.gather.beta_s_per_byte]}
    return links


def context(calibration: dict[str, Any], bandwidth: str, costs: Any, workers: int,
            sparsity: float) -> Context:
    """The estimate's context: the probed link where there is one (its all-reduce's
    alpha and beta, its all-gather's apart), else the nominal rate with the loopback
    latency."""
    probed = calibration.get("links", {}).get(bandwidth)
    if probed:
        return Context(LinkModel(*probed["ring"]), costs, workers, Options(sparsity=sparsity),
                       gather_link=LinkModel(*probed["gather"]))
    return Context(LinkModel(calibration["alpha_s"], 8.0 / parse_rate(bandwidth)), costs,
                   workers, Options(sparsity=sparsity))


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 6))
    for method in METHODS:
        mine = [r for r in rows if r["method"] == method and r["measured_s"]]
        ax.scatter([r["measured_s"] for r in mine], [r["predicted_s"] for r in mine],
                   label=method, s=22)
    values = [v for r in rows for v in (r["measured_s"], r["predicted_s"]) if v]
    low, high = min(values) / 1.3, max(values) * 1.3
    ax.plot([low, high], [low, high], color="black", lw=0.8)
    for factor in (0.8, 1.2):
        ax.plot([low, high], [low * factor, high * factor], color="grey", lw=0.6, ls="--")
    ax.set(xscale="log", yscale="log", xlabel="measured s/step", ylabel="predicted s/step",
           title="pactrain estimate against measured steps (dashed: +-20%)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["fashion-cnn", "lm-gpt"])
    parser.add_argument("--workers", nargs="+", type=int, default=[2, 4])
    parser.add_argument("--bandwidths", nargs="+", default=["10mbit", "100mbit"])
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--sparsity", type=float, default=0.9)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--warmup-steps", type=int, default=5)
    parser.add_argument("--tolerance", type=float, default=0.2)
    parser.add_argument("--out", default="estimate-check")
    parser.add_argument("--probe-link", action=argparse.BooleanOptionalAction, default=True,
                        help="Fit each link's alpha and beta with gloo's collectives in "
                        "the namespaces (off: the nominal rate, loopback latency).")
    parser.add_argument("--recompute", default=None, metavar="JSON",
                        help="Measure nothing: predict again from the calibrations and "
                        "against the measured steps of this earlier result.")
    args = parser.parse_args(argv)
    console = Console()
    prefix = output_prefix(args.out)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    if args.recompute:
        return recompute(args, console)
    rows: list[dict[str, Any]] = []
    calibrations = {}
    for workers in args.workers:
        calibration = calibrated(args.models, workers, args, console)
        calibrations[workers] = {"alpha_s": calibration["alpha_s"],
                                 "compute_s": calibration["compute_s"],
                                 "local_costs": repr(calibration["costs"]),
                                 "links": probed_links(workers, args.bandwidths, console)
                                 if args.probe_link else {}}
        predicted = {}
        for model in args.models:
            job = job_of_model(model, calibration["compute_s"][model])
            for bandwidth in args.bandwidths:
                ctx = context(calibrations[workers], bandwidth, calibration["costs"], workers,
                              args.sparsity)
                for e in estimate(job, ctx, tuple(args.methods)):
                    predicted[(model, bandwidth, e.method)] = e
        config = BenchConfig(models=args.models, methods=args.methods,
                             bandwidths=args.bandwidths, workers=workers,
                             batch_size=args.batch_size, steps=args.steps,
                             warmup_steps=args.warmup_steps, sparsity=args.sparsity,
                             compute_floor=False)
        measured = run_bench(config, console=console)["rows"]
        for row in measured:
            key = (row["model"], row["bandwidth"], row["method"])
            e = predicted.get(key)
            if e is None:
                continue
            step = (args.batch_size * workers / row["samples_per_s"]
                    if row.get("samples_per_s") else None)
            rows.append({"model": key[0], "workers": workers, "bandwidth": key[1],
                         "method": key[2], "predicted_s": e.step_s, "measured_s": step,
                         "ratio": e.step_s / step if step else None,
                         "predicted_exposed_s": e.exposed_s, "predicted_local_s": e.local_s,
                         "compute_s": e.compute_s, "payload_predicted": e.payload_bytes,
                         "payload_measured": row.get("payload_bytes_per_step"),
                         "error": row.get("error")})
        Path(f"{prefix}.json").write_text(json.dumps(
            {"args": vars(args), "calibrations": calibrations, "rows": rows}, indent=2))
    return report(rows, calibrations, args, console, prefix)


def recompute(args: argparse.Namespace, console: Console) -> int:
    """Predict again from an earlier result's calibrations (the model changed, the
    measurements did not); local costs are measured again here."""
    earlier = json.loads(Path(args.recompute).read_text())
    calibrations = {int(k): v for k, v in earlier["calibrations"].items()}
    costs_of = {}
    for workers, calibration in calibrations.items():
        costs_of[workers] = measure_local_costs(workers)
        bandwidths = sorted({r["bandwidth"] for r in earlier["rows"]
                             if r["workers"] == workers})
        if args.probe_link and not calibration.get("links"):
            calibration["links"] = probed_links(workers, bandwidths, console)
        elif not args.probe_link:
            calibration["links"] = {}
    rows = []
    for row in earlier["rows"]:
        workers = row["workers"]
        calibration = calibrations[workers]
        job = job_of_model(row["model"], calibration["compute_s"][row["model"]])
        ctx = context(calibration, row["bandwidth"], costs_of[workers], workers,
                      earlier["args"]["sparsity"])
        e, = estimate(job, ctx, (row["method"],))
        step = row["measured_s"]
        rows.append({**row, "predicted_s": e.step_s, "ratio": e.step_s / step if step else None,
                     "predicted_exposed_s": e.exposed_s, "predicted_local_s": e.local_s,
                     "payload_predicted": e.payload_bytes})
    args.methods = earlier["args"]["methods"]
    return report(rows, calibrations, args, console, output_prefix(args.out))


def report(rows: list[dict[str, Any]], calibrations: dict[int, Any],
           args: argparse.Namespace, console: Console, prefix: Path) -> int:
    """Print the table and the share within the tolerance; write .json, .md, .png."""
    table = Table(title="predicted against measured seconds per step")
    for column in ("model", "workers", "link", "method", "predicted", "measured", "ratio"):
        table.add_column(column)
    lines = ["| model | workers | link | method | predicted s | measured s | ratio |",
             "|---|---|---|---|---|---|---|"]
    within = 0
    for r in rows:
        ratio = r["ratio"]
        ok = ratio is not None and abs(ratio - 1) <= args.tolerance
        within += ok
        cells = [r["model"], str(r["workers"]), r["bandwidth"], r["method"],
                 f"{r['predicted_s']:.3f}",
                 f"{r['measured_s']:.3f}" if r["measured_s"] else "failed",
                 f"{ratio:.2f}" if ratio else "-"]
        table.add_row(*cells, style=None if ok else "red")
        lines.append("| " + " | ".join(cells) + " |")
    console.print(table)
    ratios = [abs(r["ratio"] - 1) for r in rows if r["ratio"]]
    summary = (f"within {args.tolerance:.0%}: {within} of {len(rows)}; median |ratio - 1| "
               f"{statistics.median(ratios):.2f}" if ratios else "nothing measured")
    per_method = {m: sum(1 for r in rows if r["method"] == m and r["ratio"]
                         and abs(r["ratio"] - 1) <= args.tolerance) for m in args.methods}
    console.print(summary)
    console.print("within, per method: " + ", ".join(f"{m} {n}" for m, n in per_method.items()))
    Path(f"{prefix}.md").write_text("\n".join([*lines, "", summary, ""]))
    Path(f"{prefix}.json").write_text(json.dumps(
        {"args": vars(args), "calibrations": calibrations, "rows": rows, "summary": summary,
         "within_per_method": per_method}, indent=2))
    if rows:
        plot(rows, Path(f"{prefix}.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
