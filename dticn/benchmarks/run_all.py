"""`make bench` for DT-ICN: every `bench_*.py` in this folder, one after the other.

Each benchmark prints its own side-by-side table; a failing one does not stop the others,
but the exit status says that one failed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def main() -> int:
    """Run each benchmark script with this interpreter; return non-zero if any failed."""
    failed: list[str] = []
    for script in sorted(Path(__file__).parent.glob("bench_*.py")):
        print(f"\n=== {script.name} ===", flush=True)
        if subprocess.run([sys.executable, str(script)], check=False).returncode != 0:
            failed.append(script.name)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
