"""The console script answers --version and --help quickly."""

import subprocess
import sys


def test_version_and_help() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "dticn.cli", "--version"], capture_output=True, text=True,
        check=True,
    )
    assert out.stdout.strip() == "dticn 0.1.0"
    helped = subprocess.run(
        [sys.executable, "-m", "dticn.cli", "--help"], capture_output=True, text=True,
        check=True,
    )
    assert "Usage" in helped.stdout
