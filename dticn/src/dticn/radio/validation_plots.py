"""Figures of the validation report (:mod:`dticn.radio.validation`), apart from the model."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def plot_validation(doc: dict[str, Any], out_dir: Path) -> list[Path]:
    """One PNG per section: ours beside theirs, row by row; returns the paths written."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    paths = []
    for key, section in doc["sections"].items():
        rows = [r for r in section["rows"] if r["theirs"] is not None]
        if not rows:
            continue
        x = np.arange(len(rows))
        theirs = np.array([r["theirs"] for r in rows], dtype=float)
        ours = np.array([r["ours"] for r in rows], dtype=float)
        fig, ax = plt.subplots(figsize=(max(6.0, 0.5 * len(rows) + 2), 4.2))
        ax.bar(x - 0.2, theirs, 0.4, label="DSME-LoRa (theirs)")
        colours = ["tab:green" if r["passed"] else "tab:red" if r["passed"] is False
                   else "tab:grey" for r in rows]
        ax.bar(x + 0.2, ours, 0.4, label="ours", color=colours)
        ax.set_xticks(x, [r["item"] for r in rows], rotation=60, ha="right", fontsize=7)
        if len({r["unit"] for r in rows}) > 1 or np.nanmax(ours) / max(np.nanmin(ours), 1e-9) > 50:
            ax.set_yscale("log")
        ax.set_ylabel(", ".join(sorted({r["unit"] for r in rows})))
        ax.set_title(f"{section['title']} (green: within tolerance, red: not, grey: none)",
                     fontsize=9)
        ax.legend(fontsize=8)
        fig.tight_layout()
        path = out_dir / f"dticn-validation-{key}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths
