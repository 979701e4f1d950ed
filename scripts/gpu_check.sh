#!/usr/bin/env bash
# GPU checks in one go, for a machine with an NVIDIA GPU: the GPU tests and a profile of the suite's
# kernels against eager and torch.compile, written under $OUT (default artifacts/gpu):
# gpu_tests.txt, suite_profile.txt + gpu_report.json (known-good kernels), expert_profile.txt +
# gpu_expert_report.json (the offline expert's kernels), programs_profile.txt +
# gpu_programs_report.json (the expert's conv, fusion-chain and level-3 sets), cuda_backend.txt +
# gpu_cuda_report.json (the CUDA kernels on the device and in the emulator, with their
# disagreements), cuda_controls.txt (the memory model's controls, device against emulator), serving_profile.txt + gpu_serving_report.json (the expert's serving-suite kernels),
# decoder_layer.txt + gpu_decoder_report.json (the decoder layer's step on the exported serving
# kernels against PyTorch eager and torch.compile), nvidia-smi.txt.
# Uses the machine's own Python when it already has a CUDA PyTorch and Triton (the workbench is then
# installed into it without dependencies, offline); otherwise sets up .venv with TORCH_SPEC.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-artifacts/gpu}
mkdir -p "$OUT"
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1 || echo "nvidia-smi not found" > "$OUT/nvidia-smi.txt"
PY=${PYTHON:-python3}
if $PY -c "import torch, triton; assert torch.cuda.is_available()" 2>/dev/null; then
  $PY -m pip install -q --no-deps --no-build-isolation -e . >"$OUT/install.txt" 2>&1 || export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
else
  make setup TORCH_SPEC="${TORCH_SPEC:-torch==2.13.0}" && PY=.venv/bin/python
fi
$PY -c "import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.get_device_name(0))" | tee "$OUT/versions.txt"
# No Docker engine or bubblewrap on a bare GPU box: say so and run unisolated (known-good kernels only).
$PY -c "from opforge.sandbox import get_sandbox; get_sandbox()" 2>/dev/null || export OPFORGE_SANDBOX=none
echo "sandbox: ${OPFORGE_SANDBOX:-auto}" | tee -a "$OUT/versions.txt"
export PYTHONUNBUFFERED=1
timeout "${GPU_TESTS_TIMEOUT:-150}" $PY -m pytest tests/test_gpu.py -q -rs -p no:cacheprovider 2>&1 | tee "$OUT/gpu_tests.txt"
tests=${PIPESTATUS[0]}
timeout "${PROFILE_TIMEOUT:-900}" $PY benchmarks/suite_profile.py --json "$OUT/gpu_report.json" ${PROFILE_ARGS:-} 2>&1 | tee "$OUT/suite_profile.txt"
profile=${PIPESTATUS[0]}
timeout "${PROFILE_TIMEOUT:-900}" $PY benchmarks/suite_profile.py --source expert --json "$OUT/gpu_expert_report.json" ${PROFILE_ARGS:-} 2>&1 | tee "$OUT/expert_profile.txt"
expert=${PIPESTATUS[0]}
# The expert's convolution and fusion-chain sets (multi-kernel programs), against eager and torch.compile.
timeout "${PROGRAMS_TIMEOUT:-600}" $PY benchmarks/suite_profile.py --source expert --json "$OUT/gpu_programs_report.json" \
  --specs benchmarks/expert_specs/conv/*.py benchmarks/expert_specs/fusion/*.py benchmarks/expert_specs/level3/*.py 2>&1 | tee "$OUT/programs_profile.txt"
programs=${PIPESTATUS[0]}
# CUDA C++: the known-good CUDA kernels built with nvcc -shared, verified and timed on the device,
# and verified again in the emulator: disagreements between the two are listed (cuda_backend.txt).
timeout "${CUDA_TIMEOUT:-600}" $PY benchmarks/cuda_backend.py --compare-emulator --no-baseline --json "$OUT/gpu_cuda_report.json" 2>&1 | tee "$OUT/cuda_backend.txt"
cuda=${PIPESTATUS[0]}
# The CUDA emulator's memory-model controls (issue #33) on the device and in the emulator: any
# disagreement is the emulator's error (cuda_controls.txt).
timeout "${CONTROLS_TIMEOUT:-180}" $PY -m pytest tests/test_gpu_cuda_controls.py -q -rs -p no:cacheprovider 2>&1 | tee "$OUT/cuda_controls.txt"
controls=${PIPESTATUS[0]}
# The serving suite (issue #19): the expert's kernel for each inference-engine op against eager and
# torch.compile; then the decoder layer's ops verified on the GPU into a registry of their own,
# exported, and the layer's step timed on that library against the same layer in PyTorch.
timeout "${SERVING_TIMEOUT:-600}" $PY benchmarks/suite_profile.py --source expert --json "$OUT/gpu_serving_report.json" \
  --specs ops/serving/*.py 2>&1 | tee "$OUT/serving_profile.txt"
serving=${PIPESTATUS[0]}
layer_ops=$($PY -c "import runpy; print(' '.join(f'ops/serving/{op}.py' for op in runpy.run_path('examples/decoder_layer.py')['OPS']))")
timeout "${DECODER_TIMEOUT:-600}" bash -c "$PY -m opforge --db '$OUT/serving.db' batch $layer_ops --budget 1 --no-fail \
  --report '$OUT/serving_batch.json' && $PY -m opforge --db '$OUT/serving.db' export --out '$OUT/serving_lib' && \
  KERNELS_GENERATED_NO_FALLBACK=1 $PY benchmarks/decoder_layer_step.py --library '$OUT/serving_lib' --sequences 32 \
  --context 1024 --json '$OUT/gpu_decoder_report.json'" 2>&1 | tee "$OUT/decoder_layer.txt"
decoder=${PIPESTATUS[0]}
echo "gpu tests exit $tests, suite profile exit $profile, expert profile exit $expert, programs exit $programs, cuda exit $cuda, cuda controls exit $controls, serving exit $serving, decoder layer exit $decoder; reports in $OUT"
exit $(( tests || profile || cuda || controls ))
