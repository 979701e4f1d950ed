#!/usr/bin/env bash
# GPU checks in one go, for a machine with an NVIDIA GPU: sets up .venv with a CUDA build of
# PyTorch, runs the GPU tests and profiles the standard suite, writing everything under $OUT
# (default: artifacts/gpu): gpu_tests.txt, suite_profile.txt, gpu_report.json, nvidia-smi.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-artifacts/gpu}
mkdir -p "$OUT"
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1 || echo "nvidia-smi not found" > "$OUT/nvidia-smi.txt"
# A CUDA build of torch (PyPI's default on Linux x86_64); override with TORCH_SPEC=...
make setup TORCH_SPEC="${TORCH_SPEC:-torch==2.13.0}" PYTHON="${PYTHON:-python3}"
.venv/bin/python -c "import torch; assert torch.cuda.is_available(), 'torch sees no GPU'; print(torch.cuda.get_device_name(0))"
set +e
.venv/bin/python -m pytest tests/test_gpu.py -q -rs -p no:cacheprovider 2>&1 | tee "$OUT/gpu_tests.txt"
tests=${PIPESTATUS[0]}
.venv/bin/python benchmarks/suite_profile.py --json "$OUT/gpu_report.json" 2>&1 | tee "$OUT/suite_profile.txt"
profile=${PIPESTATUS[0]}
set -e
echo "gpu tests exit $tests, suite profile exit $profile; report in $OUT"
exit $(( tests || profile ))
