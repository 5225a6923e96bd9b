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
