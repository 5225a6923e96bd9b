"""Loading the PHY's working assumptions from ``lora.toml`` (shipped as package data)."""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path
from typing import Any


def load_phy_config(path: str | Path | None = None) -> dict[str, Any]:
    """Read the PHY configuration; the packaged ``lora.toml`` when ``path`` is None."""
    if path is None:
        text = resources.files("dticn.phy").joinpath("lora.toml").read_text(encoding="utf-8")
    else:
        text = Path(path).read_text(encoding="utf-8")
    return tomllib.loads(text)
