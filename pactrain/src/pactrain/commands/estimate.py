"""`pactrain estimate`: each method's predicted step for a job, and whether PacTrain pays."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import typer

from pactrain.commands.train import MODEL_MODULE_HELP, load_model_modules

_COUNT_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmMgGbB]?)\s*$")
_COUNT_UNITS = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "b": 10**9}


def parse_count(text: str) -> int:
    """``25.6M``, ``124m``, ``1.5B``, ``800000`` -> parameters.

    Raises:
        typer.BadParameter: anything else.
    """
    match = _COUNT_RE.match(text)
    if not match:
        raise typer.BadParameter(f"cannot read {text!r}; write it like 800000, 25.6M or 1.5B",
                                 param_hint="--parameters")
    count = int(float(match.group(1)) * _COUNT_UNITS[match.group(2).lower()])
    if count < 1:
        raise typer.BadParameter("at least one parameter", param_hint="--parameters")
    return count


#: Most workers the calibration runs as processes on this host.
MEASURABLE_WORKERS = 8


def _counts(text: str, hint: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        values = []
    if not values or min(values) < 2:
        raise typer.BadParameter(f"{text!r}: comma-separated counts of at least 2 "
                                 "(4 or 8,64,256)", param_hint=hint)
    return values


def estimate(
    model: str | None = typer.Option(
        None, help="A registered model, or resnet50 / gpt2-small (laid out from their "
        "papers, at a published GPU step time). Default: digits-cnn unless --parameters."),
    model_module: list[str] | None = typer.Option(None, help=MODEL_MODULE_HELP),
    parameters: str | None = typer.Option(
        None, help="Instead of --model: a parameter count (25.6M, 124M); needs --compute-s."),
    compute_s: float | None = typer.Option(
        None, min=0.0, help="One worker's step without communication, seconds (e.g. a "
        "GPU's). Default: a reference job's published time, else measured here with the "
        "workers as processes of the model."),
    workers: str = typer.Option("4", help="Data-parallel workers; comma-separated for a "
                                "projection (8,64,256)."),
    bandwidth: str = typer.Option("10mbit,100mbit", help="Comma-separated rates of each "
                                  "worker's link (10mbit, 1gbit, ...)."),
    alpha_us: float | None = typer.Option(
        None, min=0.0, help="Latency of one collective, microseconds, at every worker "
        "count."),
    hop_us: float | None = typer.Option(
        None, min=0.0, help="Instead: latency of one step of a ring, microseconds; a "
        "collective of N workers then pays 2(N-1) of them. Default (neither): measured "
        "with the workers as gloo processes on loopback."),
    probe_link: bool = typer.Option(
        False, "--probe-link", help="Fit each link's alpha and beta, the all-reduce's and "
        "the all-gather's apart, with gloo's collectives between the workers in network "
        "namespaces behind tc tbf links of each rate (root; what a collective really gets "
        "of a rate)."),
    local_costs: str = typer.Option(
        "measured", help="measured: the hooks' local work as timed on this CPU (shared by "
        "the workers on its cores); none: not counted (work hidden on an accelerator)."),
    sparsity: float = typer.Option(0.8, min=0.0, max=0.99, help="PacTrain's sparsity."),
    powersgd_rank: int = typer.Option(4, min=1, help="PowerSGD's rank."),
    topk_density: float | None = typer.Option(
        None, min=0.0, max=1.0, help="Share top-k and DGC send (default: 1 - sparsity)."),
    send_density: float | None = typer.Option(
        None, min=0.0, max=1.0, help="PacTrain's send budget (default: the adaptive "
        "method's choice; the forced tiers send every kept entry)."),
    batch_size: int | None = typer.Option(
        None, min=1, help="Per-worker batch of the measured compute (default: the model's)."),
    methods: str | None = typer.Option(
        None, help="Comma-separated methods (default: every priced method)."),
    json_out: Path | None = typer.Option(None, "--json", help="Also write the estimates here."),
) -> None:
    """Predict each method's step time (compute, exposed communication, local work) for
    a job on a link, from the cost model the adaptive policy decides with, and say
    whether PacTrain pays."""
    from rich.console import Console

    from pactrain.costs import ComputeCosts, LinkModel
    from pactrain.estimate import METHODS, Context, LocalCosts, Options
    from pactrain.estimate import estimate as run_estimate
    from pactrain.estimate.calibrate import measure_alpha_s, measure_local_costs
    from pactrain.estimate.report import estimate_table
    from pactrain.estimate.step import verdict
    from pactrain.rates import format_rate, parse_rate

    console = Console()
    if model is not None and parameters is not None:
        raise typer.BadParameter("give --model or --parameters, not both",
                                 param_hint="--parameters")
    if parameters is not None and compute_s is None:
        raise typer.BadParameter("a parameter count has no model to time: give --compute-s "
                                 "(one worker's step, seconds)", param_hint="--compute-s")
    if alpha_us is not None and hop_us is not None:
        raise typer.BadParameter("give --alpha-us or --hop-us, not both", param_hint="--hop-us")
    if probe_link and (alpha_us is not None or hop_us is not None):
        raise typer.BadParameter("--probe-link measures the latency too: drop --alpha-us "
                                 "and --hop-us", param_hint="--probe-link")
    if local_costs not in ("measured", "none"):
        raise typer.BadParameter(f"{local_costs!r}: measured or none",
                                 param_hint="--local-costs")
    chosen = tuple(m.strip() for m in methods.split(",") if m.strip()) if methods else METHODS
    unknown = [m for m in chosen if m not in METHODS]
    if unknown:
        raise typer.BadParameter(f"no price for {', '.join(unknown)}; priced: "
                                 f"{', '.join(METHODS)}", param_hint="--methods")
    try:
        rates = [parse_rate(b) for b in bandwidth.split(",") if b.strip()]
        options = Options(sparsity, powersgd_rank, topk_density, send_density)
    except ValueError as err:
        raise typer.BadParameter(str(err)) from None
    if not rates:
        raise typer.BadParameter("no rate given", param_hint="--bandwidth")
    counts = _counts(workers, "--workers")
    unmeasured = [n for n in counts if n > MEASURABLE_WORKERS]
    if probe_link:
        from pactrain.bench.netns import can_build

        ok, why = can_build()
        if not ok:
            raise typer.BadParameter(f"cannot build the namespaces: {why}",
                                     param_hint="--probe-link")
        if unmeasured:
            raise typer.BadParameter(f"{unmeasured[0]} workers cannot be probed as "
                                     f"processes here (at most {MEASURABLE_WORKERS})",
                                     param_hint="--probe-link")
    if unmeasured and alpha_us is None and hop_us is None:
        raise typer.BadParameter(
            f"{unmeasured[0]} workers cannot be measured as processes here (at most "
            f"{MEASURABLE_WORKERS}): give --hop-us (or --alpha-us)", param_hint="--workers")
    build = _job_builder(model, model_module, parameters, compute_s, batch_size, sparsity)
    if unmeasured and build.needs_measuring:
        raise typer.BadParameter(
            f"{unmeasured[0]} workers cannot be timed as processes here: give --compute-s",
            param_hint="--workers")
    out = {"job": None, "sparsity": sparsity, "local_costs": local_costs,
           "options": vars(options), "links": []}
    for count in counts:
        job = build(count, console)
        out["job"], out["parameters"], out["compute_s"] = job.name, job.numel, job.compute_s
        if probe_link:
            console.print(f"probing each link: {count} workers in namespaces")
            probed = _probe_links(count, [format_rate(r) for r in rates])
        elif alpha_us is not None:
            alpha_s = alpha_us * 1e-6
        elif hop_us is not None:
            alpha_s = 2 * (count - 1) * hop_us * 1e-6
        else:
            console.print(f"measuring the latency of a collective: {count} gloo processes")
            alpha_s = measure_alpha_s(count)
        costs = (measure_local_costs(count) if local_costs == "measured" else
                 LocalCosts(ComputeCosts(0.0, 0.0, 0.0, 0.0, 0.0), 0.0, 0.0, 0.0))
        for rate in rates:
            if probe_link:
                link, gather = probed[format_rate(rate)]
                alpha_s = link.alpha_s
            else:
                link, gather = LinkModel(alpha_s, 8.0 / rate), None
            ctx = Context(link, costs, count, options, gather_link=gather)
            estimates = run_estimate(job, ctx, chosen)
            console.print(estimate_table(
                estimates, f"{job.name}, {count} workers, {format_rate(rate)} each "
                f"(alpha {alpha_s * 1e6:.0f} us)"))
            line = verdict(estimates)
            console.print(line)
            for e in estimates:
                for reason in e.reasons:
                    console.print(f"  {e.method}: {reason}")
            out["links"].append({"workers": count, "bandwidth": format_rate(rate),
                                 "alpha_s": alpha_s, "verdict": line,
                                 "estimates": [{**vars(e), "step_s": e.step_s}
                                               for e in estimates]})
    if json_out is not None:
        json_out.write_text(json.dumps(out, indent=2))


def _probe_links(workers: int, bandwidths: list[str]) -> dict[str, tuple[Any, Any]]:
    """Each rate's (all-reduce, all-gather) link models, fitted in the namespaces."""
    from pactrain.bench.link_probe import probe_shaped_link
    from pactrain.bench.network import bench_network

    out = {}
    with bench_network(workers) as network:
        for bandwidth in bandwidths:
            probed = probe_shaped_link(network, workers, bandwidth)
            out[bandwidth] = (probed.ring, probed.gather)
    return out


class _JobBuilder:
    """The job at a worker count: a parameter count, a reference job or a registered
    model, its compute given, published or measured here (once per worker count)."""

    def __init__(self, make: Any, needs_measuring: bool) -> None:
        self.make = make
        self.needs_measuring = needs_measuring

    def __call__(self, workers: int, console: Any) -> Any:
        return self.make(workers, console)


def _job_builder(model: str | None, model_module: list[str] | None, parameters: str | None,
                 compute_s: float | None, batch_size: int | None,
                 sparsity: float) -> _JobBuilder:
    from pactrain.estimate import job_of_count, job_of_model
    from pactrain.estimate.calibrate import measure_compute_s
    from pactrain.estimate.reference_jobs import REFERENCE_JOBS, STEP_S

    if compute_s is not None and compute_s <= 0:
        raise typer.BadParameter("must be > 0", param_hint="--compute-s")
    if parameters is not None:
        count = parse_count(parameters)
        return _JobBuilder(lambda workers, console: job_of_count(count, compute_s), False)
    model = model or "digits-cnn"
    if model in REFERENCE_JOBS:
        seconds = compute_s if compute_s is not None else STEP_S[model]
        return _JobBuilder(lambda workers, console: REFERENCE_JOBS[model](seconds), False)
    load_model_modules(model_module)
    from pactrain.models import check_data, get_model

    try:
        get_model(model)
    except KeyError as err:
        raise typer.BadParameter(f"{str(err).strip(chr(34) + chr(39))}; or resnet50, "
                                 "gpt2-small", param_hint="--model") from None
    if compute_s is not None:
        return _JobBuilder(lambda workers, console: job_of_model(model, compute_s), False)
    try:
        check_data([model], None)
    except FileNotFoundError as err:
        raise typer.BadParameter(f"{err}; or give --compute-s", param_hint="--model") from None

    def measured(workers: int, console: Any) -> Any:
        console.print(f"measuring {model}'s compute: {workers} workers, no communication")
        return job_of_model(model, measure_compute_s(model, workers, batch_size, sparsity))

    return _JobBuilder(measured, True)


def register(app: typer.Typer) -> None:
    """Add `estimate` to the CLI."""
    app.command("estimate")(estimate)
