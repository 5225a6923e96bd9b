"""Plots of aggregated rows (kept apart from the model: it only reads result dicts)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

LINK_GROUPS = (
    ("consumer-forwarder", "Internet consumer-forwarder"),
    ("forwarder-gateway", "Internet forwarder-gateway"),
    ("lora:down", "LoRa downlink"),
    ("lora:up", "LoRa uplink"),
)


def write_plots(rows: list[dict[str, Any]], out_dir: str | Path) -> list[Path]:
    """Success ratio, latency CDF, messages per item by link, lifetime: four PNG files."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    names = [r["config"] for r in rows]
    x = np.arange(len(rows))
    paths: list[Path] = []

    def bars(key: str, ylabel: str, filename: str, hline: float | None = None) -> None:
        fig, ax = plt.subplots(figsize=(8, 3.6))
        vals = [r[key] for r in rows]
        errs = [r.get(f"{key}_ci95", 0.0) for r in rows]
        errs = [0.0 if e != e else e for e in errs]
        ax.bar(x, vals, yerr=errs, capsize=3, color="tab:blue")
        if hline is not None:
            ax.axhline(hline, color="tab:red", ls="--", lw=1, label="one year")
            ax.legend()
        ax.set_xticks(x, names, rotation=30, ha="right")
        ax.set_ylabel(ylabel)
        ax.grid(axis="y", alpha=0.3)
        fig.tight_layout()
        path = out / filename
        fig.savefig(path, dpi=120)
        plt.close(fig)
        paths.append(path)

    bars("success_ratio", "success ratio", "success_ratio.png")
    bars("lifetime_days", "projected lifetime (days)", "lifetime.png", hline=365.0)

    fig, ax = plt.subplots(figsize=(7, 4))
    styles = ("-", "--", ":", "-.")
    for k, r in enumerate(rows):
        lat = np.sort(np.asarray(r.get("latencies_s", []), dtype=float))
        if len(lat):
            ax.step(lat, np.arange(1, len(lat) + 1) / len(lat), where="post", label=r["config"],
                    ls=styles[k % len(styles)])
    ax.set_xlabel("time to content (s)")
    ax.set_ylabel("CDF")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    path = out / "latency_cdf.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    paths.append(path)

    fig, ax = plt.subplots(figsize=(8, 4))
    bottom = np.zeros(len(rows))
    for prefix, label in LINK_GROUPS:
        vals = np.asarray([
            sum(v for k, v in r.get("packets_per_transaction_by_link", {}).items()
                if k.startswith(prefix))
            for r in rows])
        ax.bar(x, vals, bottom=bottom, label=label)
        bottom += vals
    ax.set_xticks(x, names, rotation=30, ha="right")
    ax.set_ylabel("packets per transaction (started item)")
    ax.legend(fontsize=7)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    path = out / "messages_per_item.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    paths.append(path)
    return paths


def write_mac_plot(rows_by_mac: dict[str, list[dict[str, Any]]], path: str | Path) -> Path:
    """The same configurations over each MAC, side by side: success, p50 latency, LoRa
    frames per item and lifetime, one panel each, one bar per MAC and configuration."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    panels = (("success_ratio", "success ratio", False),
              ("latency_p50_s", "p50 time to content (s)", True),
              ("lora_frames_per_item", "LoRa frames per item", False),
              ("lifetime_days", "projected lifetime (days)", True))
    macs = list(rows_by_mac)
    names = [r["config"] for r in rows_by_mac[macs[0]]]
    x = np.arange(len(names))
    width = 0.8 / len(macs)
    fig, axes = plt.subplots(2, 2, figsize=(11, 6.5))
    for ax, (key, label, log) in zip(axes.flat, panels, strict=True):
        for k, mac in enumerate(macs):
            vals = np.asarray([float(r[key]) for r in rows_by_mac[mac]])
            ax.bar(x + (k - (len(macs) - 1) / 2) * width, np.nan_to_num(vals), width,
                   label=mac)
        if log:
            ax.set_yscale("log")
        if key == "lifetime_days":
            ax.axhline(365.0, color="tab:red", ls="--", lw=1)
        ax.set_xticks(x, names, rotation=30, ha="right", fontsize=7)
        ax.set_ylabel(label)
        ax.grid(axis="y", alpha=0.3)
    axes.flat[0].legend(fontsize=8)
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def write_sensitivity_plot(doc: dict[str, Any], path: str | Path) -> Path:
    """One heat map per study (rows) and metric (columns): variants down, configurations
    across, each cell's mean written in it and coloured by its change against the study's
    base row (red: lower, blue: higher; grey: nothing delivered)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from dticn.experiments.sensitivity import SHOWN, cell

    configs = doc["settings"]["configs"]
    bases = doc["settings"]["bases"]
    fig, axes = plt.subplots(len(bases), len(SHOWN), squeeze=False,
                             figsize=(5.2 * len(SHOWN), 4.2 * len(bases)))
    for i, base in enumerate(bases):
        rows = [r for r in doc["rows"] if r["base"] == base]
        names = list(dict.fromkeys(r["variant"] for r in rows))
        by = {(r["variant"], r["config"]): r for r in rows}
        for j, (key, title, digits) in enumerate(SHOWN):
            ax = axes[i][j]
            values = np.asarray([[float(by[(v, c)][key]) for c in configs] for v in names])
            ref = values[0]
            with np.errstate(divide="ignore", invalid="ignore"):
                change = np.clip((values - ref) / np.where(ref == 0, 1.0, np.abs(ref)), -1, 1)
            shown = np.ma.masked_invalid(change)
            cmap = plt.get_cmap("RdBu").with_extremes(bad="0.85")
            ax.imshow(shown, cmap=cmap, vmin=-1, vmax=1, aspect="auto")
            for a, v in enumerate(names):
                for b, c in enumerate(configs):
                    ax.text(b, a, cell(by[(v, c)], key, digits), ha="center", va="center",
                            fontsize=6)
            ax.set_xticks(range(len(configs)), configs, rotation=60, fontsize=7)
            ax.set_yticks(range(len(names)), names if j == 0 else [""] * len(names),
                          fontsize=7)
            ax.set_title(f"{title} (from {base})", fontsize=9)
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out
