"""What backends/triton/fastlang.py saves: the suite's known-good Triton kernels run under Triton's
CPU interpreter with and without it, in the same run.

Each mode is a fresh child process (Triton reads TRITON_INTERPRET at import); both install fastdot,
as the CPU worker does, so the only difference is the helper-call patch. Per op: the spec's main
inputs (CPU-sized as verify sizes them), one warm-up call, then the median of --calls timed calls;
the outputs of the two modes must agree bit for bit.

Run from the repo root:
    .venv/bin/python benchmarks/interpreter_helpers.py [--ops softmax,rms_norm] [--calls 3]

Exit status 0 (a measurement); 1 when the two modes' outputs differ.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DEFAULT_OPS = "softmax,log_softmax,rms_norm,layer_norm,cross_entropy,row_max,cumsum,silu"

CHILD = r'''
import hashlib, importlib.util, json, os, statistics, sys, time
os.environ["TRITON_INTERPRET"] = "1"
sys.path.insert(0, sys.argv[1])
import torch
from opforge.backends.triton import fastdot, fastlang
from opforge.harness.spec import load_spec
from opforge.harness.verify import CPU_MAX_BYTES, CPU_MAX_ELEMENTS
fastdot.install()
if sys.argv[2] == "fastlang":
    fastlang.install()
rows = {}
for op in sys.argv[3].split(","):
    spec = load_spec(f"{sys.argv[1]}/ops/{op}.py", max_elements=CPU_MAX_ELEMENTS, max_bytes=CPU_MAX_BYTES)
    loaded = importlib.util.spec_from_file_location(f"k_{op}", f"{sys.argv[1]}/opforge/backends/triton/knowledge/{op}.py")
    module = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(module)
    sized = spec.module()
    torch.manual_seed(0)
    model = module.ModelNew(*sized.get_init_inputs())
    inputs = sized.get_inputs()
    out = model(*inputs)
    times = []
    for _ in range(int(sys.argv[4])):
        began = time.perf_counter()
        out = model(*inputs)
        times.append(time.perf_counter() - began)
    digest = hashlib.sha256(b"".join(t.detach().contiguous().numpy().tobytes() for t in
                                     (out if isinstance(out, (tuple, list)) else [out]))).hexdigest()
    rows[op] = {"seconds": statistics.median(times), "digest": digest}
print(json.dumps(rows))
'''


def run(mode: str, ops: str, calls: int) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), mode, ops, str(calls)],
                          capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        sys.exit(f"{mode} run failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", default=DEFAULT_OPS)
    parser.add_argument("--calls", type=int, default=3)
    args = parser.parse_args()
    plain, fast = run("plain", args.ops, args.calls), run("fastlang", args.ops, args.calls)
    print("| op | plain (s per call) | fastlang (s per call) | speed-up | same output |")
    print("|---|---|---|---|---|")
    differ = False
    for op in args.ops.split(","):
        same = plain[op]["digest"] == fast[op]["digest"]
        differ |= not same
        print(f"| {op} | {plain[op]['seconds']:.3f} | {fast[op]['seconds']:.3f} | "
              f"{plain[op]['seconds'] / fast[op]['seconds']:.2f}x | {'yes' if same else 'NO'} |")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
