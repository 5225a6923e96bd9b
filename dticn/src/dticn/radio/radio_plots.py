"""Figures of a radio run (kept apart from the model code): energy breakdown, slot timeline."""

from __future__ import annotations

from pathlib import Path

from dticn.mac.gts import Direction, GtsTable
from dticn.radio.results import RadioResult

_STATE_ORDER = ("tx", "rx", "cad", "standby", "sleep", "mcu_active", "mcu_sleep")


def _state_key(name: str) -> int:
    base = "tx" if name.startswith("tx@") else name
    return _STATE_ORDER.index(base) if base in _STATE_ORDER else len(_STATE_ORDER)


def plot_run(result: RadioResult, table: GtsTable | None, path: str | Path, *,
             max_nodes: int = 100) -> Path:
    """Write a PNG: per-node energy per day by state, and one multisuperframe's slots (a
    DSME run) or the latency distribution (``table`` None: a MAC without a schedule)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle
    from matplotlib.ticker import MaxNLocator

    path = Path(path)
    fig, (ax_e, ax_t) = plt.subplots(2, 1, figsize=(12, 9),
                                     gridspec_kw={"height_ratios": [1, 1.2]})
    nodes = [n for n in result.nodes if n.energy is not None][:max_nodes]
    states = sorted({k for n in nodes for k in n.energy.charge_mas}, key=_state_key)  # type: ignore[union-attr]
    bottom = [0.0] * len(nodes)
    xs = [n.node for n in nodes]
    cmap = plt.get_cmap("tab10")
    for idx, state in enumerate(states):
        vals = [n.energy.energy_per_day_by_state_j().get(state, 0.0) for n in nodes]  # type: ignore[union-attr]
        ax_e.bar(xs, vals, bottom=bottom, label=state, color=cmap(idx % 10), width=0.8)
        bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
    ax_e.set_xlabel("node", labelpad=0)
    ax_e.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax_e.set_ylabel("energy per day (J)")
    shown = f" (first {max_nodes} of {len(result.nodes)})" if len(result.nodes) > max_nodes else ""
    ax_e.set_title(f"Per-node energy per day by state{shown}")
    ax_e.legend(ncol=len(states), fontsize=8, loc="upper center",
                bbox_to_anchor=(0.5, -0.12), frameon=False)

    if table is None:
        import numpy as np
        lat = np.sort(np.concatenate([n.latencies_s for n in result.nodes]))
        if len(lat):
            ax_t.plot(lat, np.arange(1, len(lat) + 1) / len(lat))
        ax_t.set_xlabel("latency from item to gateway (s)")
        ax_t.set_ylabel("share of delivered items")
        ax_t.set_title(f"Latency distribution ({result.scenario.mac}, {len(lat)} items)")
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        return path
    timing = table.timing
    msf = timing.multisuperframe_s
    channels = max(1, min(table.channels, max((k[2] for k in table.cells), default=0) + 1))
    for sf in range(timing.superframes_per_multisuperframe):
        t0 = sf * timing.superframe_s
        beacon = sf == 0 or (t0 % timing.beacon_interval_s) < 1e-9
        ax_t.add_patch(Rectangle((t0, -0.5), timing.slot_s, channels,
                                 color="black" if beacon else "lightgrey",
                                 alpha=0.8 if beacon else 0.5))
        cap0, cap1 = timing.cap_window(sf)
        ax_t.add_patch(Rectangle((cap0, -0.5), cap1 - cap0, channels, color="tab:orange",
                                 alpha=0.25))
    for (_sf, _slot, ch), gts in table.cells.items():
        start = gts.offset(timing)
        color = "tab:blue" if gts.direction is Direction.UP else "tab:green"
        ax_t.add_patch(Rectangle((start, ch - 0.4), timing.slot_s, 0.8, facecolor=color,
                                 edgecolor="white", linewidth=0.6))
        if len(table.cells) <= 60:
            ax_t.text(start + timing.slot_s / 2, ch, str(gts.device), ha="center",
                      va="center", fontsize=6, color="white")
    ax_t.set_xlim(0, msf)
    ax_t.set_ylim(-0.5, channels - 0.5)
    ax_t.set_yticks(range(channels))
    ax_t.set_xlabel("time in the multisuperframe (s)")
    ax_t.set_ylabel("channel")
    ax_t.set_title(f"One multisuperframe ({msf:.2f} s): beacon (black), CAP (orange), "
                   "uplink GTS (blue), downlink GTS (green); labels are node ids")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
