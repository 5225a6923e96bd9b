#!/usr/bin/env bash
# GPU checks of PacTrain, as one short script for a GPU machine (about 5 minutes):
#   1. the CUDA tests (every forced tier and the adaptive one, NCCL against gloo);
#   2. resnet18 on NCCL, 2 workers if two GPUs exist (else 1), dense / PowerSGD / PacTrain,
#      20 steps each: samples/s and bytes per step, one JSON line per method.
# Usage (from the repository root, after `make setup`): bash pactrain/benchmarks/gpu_check.sh
set -euo pipefail
PY=${PY:-.venv/bin/python}
OUT=${OUT:-out/gpu-check}
mkdir -p "$OUT"
$PY -c "import torch; assert torch.cuda.is_available(), 'no CUDA GPU visible'; \
print('GPUs:', torch.cuda.device_count(), torch.cuda.get_device_name(0))"
(cd pactrain && ../$PY -m pytest -q -rs tests/test_cuda.py) | tee "$OUT/tests.txt"
WORKERS=$($PY -c "import torch; print(min(2, torch.cuda.device_count()))")
for method in dense powersgd pactrain; do
  .venv/bin/pactrain train --model resnet18 --method "$method" --workers "$WORKERS" \
    --backend nccl --steps 20 --sparsity 0.9 --json - 2>>"$OUT/stderr.txt" \
    | $PY -c "import json, sys; r = json.load(sys.stdin); print(json.dumps({k: r.get(k) for k in \
('method', 'workers', 'samples_per_s', 'payload_bytes_per_step', 'tier_counts', \
'final_test_accuracy')}))" | tee -a "$OUT/bench.jsonl"
done
