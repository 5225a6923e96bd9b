"""CUDA and NCCL: the same training on GPUs as on CPUs (skipped without a CUDA GPU).

Bytes are deterministic, so every forced tier must hand all-reduce exactly the bytes it
hands it under gloo on the CPU, with the same tier counts and density; weights differ only
by floating-point kernels. ``pactrain/benchmarks/gpu_check.sh`` runs this file and a short
NCCL benchmark on a GPU machine.
"""

import pytest
import torch

from pactrain.train.config import RunConfig
from pactrain.train.launch import run_training

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@pytest.mark.parametrize("method", ["pactrain-fp32", "pactrain-fp16", "pactrain-ternary",
                                    "pactrain-packed", "pactrain", "powersgd", "terngrad",
                                    "topk"])
def test_a_method_runs_on_cuda_with_nccl_as_on_cpu(method: str) -> None:
    workers = min(2, torch.cuda.device_count())
    results = {}
    for backend in ("gloo", "nccl"):
        config = RunConfig(model="digits-cnn", method=method, workers=workers, steps=40,
                           backend=backend, probe_link=False, prune_start=0.0,
                           prune_end=0.5)
        results[backend] = run_training(config, timeout_s=600, progress=False)
    cpu, gpu = results["gloo"], results["nccl"]
    assert gpu["payload_bytes_per_step"] == cpu["payload_bytes_per_step"]
    assert gpu["tier_counts"] == cpu["tier_counts"] and gpu["density"] == cpu["density"]
    assert gpu["mask_consistent"]
    assert abs(gpu["final_test_accuracy"] - cpu["final_test_accuracy"]) < 0.05
