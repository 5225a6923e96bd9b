"""`dticn plan`: which settings give a workload the longest battery life within its
latency bound and delivery floor (DSME SO/MO/BO beside LoRaWAN class A and B SF), on the
push path (the radio planner) or, with ``--scheme``, on an Interest path (the whole NDN
edge per candidate, :mod:`dticn.experiments.edge_plan`)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import typer


def plan_command(
    nodes: int = typer.Option(10, "--nodes", help="End nodes per gateway."),
    interval: str = typer.Option("10m", "--interval",
                                 help="One item per node every INTERVAL (e.g. 600s, 10m)."),
    payload: int = typer.Option(8, "--payload", help="Bytes per item."),
    latency_p95: str | None = typer.Option(None, "--latency-p95",
                                           help="Bound on the p95 item-to-gateway latency."),
    latency_p50: str | None = typer.Option(None, "--latency-p50",
                                           help="Bound on the median latency."),
    delivery: float = typer.Option(0.99, "--delivery", help="Delivery ratio floor."),
    battery: float = typer.Option(2600.0, "--battery-mah", help="Battery capacity (mAh)."),
    energy_profile: str = typer.Option(
        "optimised", "--energy-profile", help="optimised (datasheet currents, every MAC) or "
        "dsme-lora (DSME-LoRa's measured node; LoRaWAN rows then use casals-class-a, the "
        "measured class A device)."),
    duration: str = typer.Option("1d", "--duration", help="Simulated time per candidate."),
    clock_ppm: float = typer.Option(20.0, "--clock-ppm",
                                    help="Crystal tolerance; DSME beacon intervals whose drift "
                                         "exceeds the beacon guard are refused (0: no check)."),
    json_out: Path | None = typer.Option(None, "--json", help="Write the plan here."),
    png_out: Path | None = typer.Option(None, "--png",
                                        help="Figure path (default: next to --json)."),
    rows: int = typer.Option(15, "--rows", help="Rows of the candidate table."),
    scheme: str = typer.Option(
        "push", "--scheme", help="push (default: items pushed up, the radio path) or a "
        "configuration that pulls (rice-schedule, rice, v3-cr, ...): then every candidate "
        "runs the whole NDN edge (DSME MO, LoRaWAN class A keep-alive or class B ping "
        "period) and latency is the consumer's time to content."),
    search: str = typer.Option("6h", "--search",
                               help="With a pulling --scheme: simulated window per candidate "
                                    "while searching; the recommendation is re-run over "
                                    "--duration."),
) -> None:
    """Search MAC settings on the fast engines, print the Pareto front of lifetime against
    p95 latency and the recommendation with its reason, confirm it on the event engine."""
    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table

    from dticn.experiments.edge_plan import EdgeWorkload, confirm_edge, edge_candidates, plan_edge
    from dticn.radio.planner import Workload, candidates, confirm, plan
    from dticn.radio.scenario import parse_duration

    console = Console(stderr=True)
    out = Console(width=None if Console().is_terminal else 150)
    for path in (json_out, png_out):
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
    try:
        work = Workload(nodes=nodes, interval_s=parse_duration(interval),
                        payload_bytes=payload,
                        latency_p95_s=math.inf if latency_p95 is None
                        else parse_duration(latency_p95),
                        latency_p50_s=math.inf if latency_p50 is None
                        else parse_duration(latency_p50),
                        delivery=delivery, battery_mah=battery, energy_profile=energy_profile,
                        duration_s=parse_duration(duration), clock_ppm=clock_ppm)
        edge = None if scheme == "push" else EdgeWorkload(work, scheme,
                                                          parse_duration(search))
    except (ValueError, KeyError) as exc:
        raise typer.BadParameter(str(exc).strip('"'), param_hint="--scheme"
                                 if isinstance(exc, KeyError) else None) from exc
    space = list(candidates() if edge is None else edge_candidates())
    with Progress(console=console, transient=True) as bar:
        task = bar.add_task("planning", total=len(space))
        if edge is None:
            result = plan(work, space, progress=lambda c: bar.advance(task))
        else:
            result = plan_edge(edge, space, progress=lambda c: bar.advance(task))
    path = ("push path: item to gateway" if edge is None
            else f"{scheme}: consumer's time to content")
    table = Table(title=f"Pareto front: {nodes} nodes, one {payload}-byte item every "
                        f"{interval} per node, {battery:g} mAh ({path})")
    for col in ("configuration", "energy", "lifetime d", "p50 s", "p95 s", "delivery",
                "meets bounds"):
        table.add_column(col, justify="right")
    for c in result.front[:rows]:
        table.add_row(c.label, c.energy_profile, f"{c.lifetime_days:,.0f}",
                      f"{c.latency_p50_s:.1f}", f"{c.latency_p95_s:.1f}", f"{c.delivery:.4f}",
                      "yes" if c.feasible else "; ".join(c.misses),
                      style="bold" if c is result.recommended else None)
    out.print(table)
    feasible = sum(c.feasible for c in result.candidates)
    refused = sum(c.refused is not None for c in result.candidates)
    out.print(f"{len(result.candidates)} configurations: {feasible} meet the bounds, "
              f"{refused} refused (schedule, slot or drift; reasons in the JSON)")
    for mac, name in (("lorawan-a", "class A"), ("lorawan-b", "class B")):
        ran = [c for c in result.candidates if c.changes.get("mac") == mac
               and c.refused is None]
        if ran:    # the longest-lived that meets the bounds, else the longest-lived
            meets = [c for c in ran if not c.misses]
            best = max(meets or ran, key=lambda c: c.lifetime_days)
            note = ("" if best.comparable else "; datasheet currents, no measured profile "
                    f"for {mac}: not comparable, not recommended")
            head = (f"LoRaWAN {name} at best" if meets else
                    f"LoRaWAN {name}: none meets the bounds; longest-lived")
            out.print(f"{head}: {best.label}, {best.lifetime_days:,.0f} days, p95 "
                      f"{best.latency_p95_s:.1f} s, delivery {best.delivery:.4f} "
                      f"({best.energy_profile}{note})")
    out.print(f"recommended: {result.why()}")
    payload_json = result.as_dict()
    if result.recommended is not None:
        r = result.recommended
        if edge is None:
            check = confirm(work, r)
            title = f"{r.label}: fast engine ({r.engine}) beside the event engine"
        else:
            check = confirm_edge(edge, r)
            title = f"{r.label}: the search run beside the full run"
        cmp = Table(title=title)
        for col in ("", "lifetime d", "p95 s", "delivery"):
            cmp.add_column(col, justify="right")
        cmp.add_row(r.engine, f"{r.lifetime_days:,.1f}", f"{r.latency_p95_s:.2f}",
                    f"{r.delivery:.4f}")
        cmp.add_row(check.engine, f"{check.lifetime_days:,.1f}", f"{check.latency_p95_s:.2f}",
                    f"{check.delivery:.4f}")
        cmp.add_row("ratio", f"{check.lifetime_days / r.lifetime_days:.3f}",
                    f"{check.latency_p95_s / r.latency_p95_s:.3f}",
                    f"{check.delivery / r.delivery:.4f}")
        out.print(cmp)
        payload_json["recommended"]["event_engine" if edge is None else "full_run"] = \
            check.as_dict()
    payload_json["scheme"] = scheme
    if json_out is not None:
        json_out.write_text(json.dumps(payload_json, indent=1, default=str))
        out.print(f"wrote {json_out}")
        if png_out is None:
            png_out = json_out.with_suffix(".png")
    if png_out is not None:
        _plot(result, png_out)
        out.print(f"wrote {png_out}")


def _plot(result: object, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    ran = [c for c in result.candidates if c.refused is None]  # type: ignore[attr-defined]
    for mac, color in (("dsme", "tab:blue"), ("lorawan-a", "tab:red"),
                       ("lorawan-b", "tab:orange")):
        pts = [c for c in ran if c.changes.get("mac", "dsme") == mac]
        ax.scatter([c.latency_p95_s for c in pts], [c.lifetime_days for c in pts], s=12,
                   color=color, alpha=0.6, label=mac)
    front = result.front  # type: ignore[attr-defined]
    ax.plot([c.latency_p95_s for c in front], [c.lifetime_days for c in front], "k-",
            lw=1, label="Pareto front")
    rec = result.recommended  # type: ignore[attr-defined]
    if rec is not None:
        ax.scatter([rec.latency_p95_s], [rec.lifetime_days], marker="*", s=200,
                   color="gold", edgecolors="black", zorder=5, label=f"recommended: {rec.label}")
    bound = result.workload.latency_p95_s  # type: ignore[attr-defined]
    if math.isfinite(bound):
        ax.axvline(bound, color="grey", ls="--", label=f"p95 bound {bound:g} s")
    ax.set_xscale("log")
    ax.set_xlabel("latency p95 (s)")
    ax.set_ylabel("lifetime (days)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def register(app: typer.Typer) -> None:
    """Add `plan` to the CLI."""
    app.command("plan")(plan_command)
