"""The Hugging Face Trainer recipe, run as a user would: 2 CPU processes under torchrun."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pactrain.train.launch import free_port

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "hf_trainer.py"


@pytest.mark.slow
def test_trainer_example_prunes_and_compacts_gpt2(tmp_path: Path) -> None:
    pytest.importorskip("transformers", reason="optional extra pactrain[hf]")
    command = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "1",
               "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
               "--master_port", str(free_port()), str(EXAMPLE), "--steps", "40",
               "--method", "pactrain-fp16"]  # a fixed tier: bytes that do not hang on timing
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=500, env=env,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith('{"rank')]
    assert sorted(line["rank"] for line in lines) == [0, 1]
    for line in lines:
        assert line["steps"] == 40  # one PacTrain step per Trainer optimizer step
        assert line["density"] == pytest.approx(0.2, abs=1e-3)
        assert line["block_zero_share"] >= 0.95 * 0.8  # the Conv1D projections are pruned
        assert line["compacted_fraction"] > 0.9
        # averaged over the whole run, pruning ramp included. Why a fixed tier: the adaptive
        # policy sent the dense payload on a loaded machine (one run of two, 2026-12-06);
        # fp16 of the 20% kept block weights plus the dense embeddings is 0.13x dense, the
        # first 10 steps of the ramp more
        assert line["payload_bytes_per_step"] < 0.25 * line["dense_bytes"]
        assert line["held_out_loss"] < 4.0  # it learns (an untrained model: about 5.5)
    assert lines[0]["weights_sum"] == lines[1]["weights_sum"]  # one model on both ranks
