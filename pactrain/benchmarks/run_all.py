"""`make bench` for PacTrain: the throttled side-by-side comparison (target preset).

Writes pactrain-bench.{json,png,md} in the current directory. See throttled_grid.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from throttled_grid import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
