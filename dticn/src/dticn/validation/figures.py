"""Figures of the validation report (:mod:`dticn.validation`), from its JSON alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def plot_validation(doc: dict[str, Any], out_dir: Path) -> list[Path]:
    """One PNG per section, one panel per unit: ours beside theirs, row by row; returns
    the paths written. Ours is green within tolerance, red outside, grey without one."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    paths = []
    for key, section in doc["sections"].items():
        # thresholds ("< 10 s") are not values of theirs: left out of the bars
        rows = [r for r in section["rows"] if r["theirs"] is not None
                and not r["tolerance"].startswith("<")]
        if not rows:
            continue
        units = sorted({r["unit"] for r in rows}, key=[r["unit"] for r in rows].index)
        widths = [sum(r["unit"] == u for r in rows) + 1 for u in units]
        fig, axes = plt.subplots(1, len(units), figsize=(max(6.0, 0.45 * sum(widths) + 2), 4.4),
                                 gridspec_kw={"width_ratios": widths}, squeeze=False)
        for ax, unit in zip(axes[0], units, strict=True):
            sub = [r for r in rows if r["unit"] == unit]
            x = np.arange(len(sub))
            ax.bar(x - 0.2, [r["theirs"] for r in sub], 0.4, label="DSME-LoRa")
            colours = ["tab:green" if r["passed"] else "tab:red" if r["passed"] is False
                       else "tab:grey" for r in sub]
            ax.bar(x + 0.2, [r["ours"] for r in sub], 0.4, color=colours, label="ours")
            ax.set_xticks(x, [r["item"] for r in sub], rotation=60, ha="right", fontsize=7)
            ax.set_ylabel(unit)
            values = [v for r in sub for v in (r["theirs"], r["ours"]) if v > 0]
            if values and max(values) / min(values) > 30:
                ax.set_yscale("log")
        axes[0][0].legend(fontsize=8)
        fig.suptitle(f"{section['title']}: theirs (blue) and ours (green within tolerance, "
                     "red outside, grey none)", fontsize=9)
        fig.tight_layout()
        path = out_dir / f"dticn-validation-{key}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths
