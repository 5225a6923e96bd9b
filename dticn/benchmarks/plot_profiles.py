"""Both profiles side by side from ``dticn reproduce --profile model --profile artifact
--json benchmarks/results/dticn-profiles.json``: success, median time to content, LoRa frames
per item and lifetime per configuration (writes dticn-profiles.png next to the JSON)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

PANELS = (("success_ratio", "success ratio"), ("latency_p50_s", "p50 time to content (s)"),
          ("lora_frames_per_item", "LoRa frames per item"), ("lifetime_days", "lifetime (days)"))


def main(path: str = "benchmarks/results/dticn-profiles.json") -> None:
    doc = json.loads(Path(path).read_text())
    by_profile = {p: tables[str(doc["settings"]["losses"][0])]
                  for p, tables in doc["rows_by_profile"].items()}
    configs = doc["settings"]["configs"]
    fig, axes = plt.subplots(1, len(PANELS), figsize=(18, 4))
    width = 0.8 / len(by_profile)
    for ax, (key, title) in zip(axes, PANELS, strict=True):
        for k, (prof, rows) in enumerate(by_profile.items()):
            ax.bar([i + k * width for i in range(len(configs))], [r[key] for r in rows],
                   width, label=prof)
        ax.set_xticks([i + width / 2 for i in range(len(configs))], configs, rotation=60)
        ax.set_title(title)
    axes[0].legend()
    fig.tight_layout()
    out = Path(path).with_suffix(".png")
    fig.savefig(out, dpi=100)
    print(f"wrote {out}")


if __name__ == "__main__":
    main(*sys.argv[1:])
