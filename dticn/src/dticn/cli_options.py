"""Command-line options that several `dticn` commands share (one definition, one help text)."""

from __future__ import annotations

import typer

#: The node's listen policy during the CAP (reproduce, sweep).
CAP_RX = typer.Option(None, "--cap-rx/--no-cap-rx",
                      help="Node listens through the CAP (default: the profile's: off).")

#: The energy profile of a reproduction or sweep (the radio command words its own default).
ENERGY_PROFILE = typer.Option(
    None, "--energy-profile", help="optimised (ours) or dsme-lora (DSME-LoRa's measured "
    "per-event energy); default: the profile's (model: optimised, artifact: dsme-lora).")
