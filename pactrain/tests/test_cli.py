"""The console script answers --version and --help without importing torch."""

import subprocess
import sys


def test_version_and_help() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "pactrain.cli", "--version"], capture_output=True, text=True,
        check=True,
    )
    assert out.stdout.strip() == "pactrain 0.1.0"
    helped = subprocess.run(
        [sys.executable, "-m", "pactrain.cli", "--help"], capture_output=True, text=True,
        check=True,
    )
    assert "Usage" in helped.stdout
