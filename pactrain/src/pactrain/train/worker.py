"""Worker entry point: ``python -m pactrain.train.worker CONFIG.json``.

Configured torchrun-style by environment variables RANK, WORLD_SIZE, MASTER_ADDR and
MASTER_PORT (``torchrun`` sets them, and so does :func:`pactrain.train.launch.run_training`),
so the same command runs on one machine or several. Rank 0 writes the result JSON to the
config's ``json_out``; a failing rank prints its traceback to stderr and exits with 1.
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import sys
import traceback
from pathlib import Path
from typing import NoReturn

import torch
import torch.distributed as dist

from pactrain.train.config import RunConfig
from pactrain.train.loop import train_rank


def main(argv: list[str] | None = None) -> int:
    """Run one rank. Returns 2 on bad usage; otherwise the process ends here (0 after a
    finished run, 1 after a failure)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m pactrain.train.worker CONFIG.json", file=sys.stderr)
        return 2
    config = RunConfig.load(args[0])
    missing = [v for v in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
               if v not in os.environ]
    if missing:
        print(f"environment variables {missing} are not set; start the worker with torchrun "
              "or pactrain.train.launch.run_training", file=sys.stderr)
        return 2
    rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    # tier decisions and mask repairs are logged by pactrain's loggers (INFO / WARNING)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format=f"%(asctime)s rank{rank} %(name)s %(levelname)s %(message)s")
    logging.getLogger("pactrain").setLevel(logging.INFO)
    torch.set_num_threads(1)
    dist.init_process_group(
        config.backend, rank=rank, world_size=world_size,
        timeout=datetime.timedelta(seconds=config.timeout_s),
    )
    try:
        result = train_rank(config, rank, world_size)
        if rank == 0 and config.json_out:
            Path(config.json_out).write_text(json.dumps(result, indent=2, sort_keys=True))
    except Exception:
        traceback.print_exc()
        _leave(1)  # skip destroy_process_group: peers may be stuck in a collective
    dist.destroy_process_group()
    _leave(0)


def _leave(status: int) -> NoReturn:
    """Flush the logs and output, then end the process without the interpreter's teardown.

    Why, as pactrain.train.local_group's ranks do: teardown's garbage collection can free
    objects that gloo's threads still hold (a comm hook's state), and the process then
    aborts after a finished run ("terminate called without an active exception", status
    -6: seen once in tests/test_cli.py). The result and any checkpoint are on disk by
    now, so only the output needs flushing.
    """
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


if __name__ == "__main__":
    raise SystemExit(main())
