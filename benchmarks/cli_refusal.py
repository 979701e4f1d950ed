"""How fast `opforge verify` refuses bad input, wall time per case (median of --runs):

  * a missing kernel file, a kernel that is not Python (a .cu file), an unknown backend name, and a
    CUDA kernel given without --backend: each is one line and exit 2, decided before torch loads
    (opforge/harness/intake.py, called from cli.main before the parser);
  * as the yardsticks: the bare interpreter, and `import torch` (what every refusal cost before).

Run from the repo root:
    .venv/bin/python benchmarks/cli_refusal.py [--runs 5]
Exit status 1 when a case does not exit 2 with one line on stderr.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OPFORGE = str(Path(sys.executable).parent / "opforge")


def cases(tmp: Path) -> dict[str, list[str]]:
    cu = tmp / "scale.cu"
    cu.write_text("__global__ void scale(float* x) { x[threadIdx.x] *= 2.0f; }\n")
    good = "opforge/backends/triton/knowledge/softmax.py"
    return {
        "missing kernel": [OPFORGE, "verify", "ops/softmax.py", str(tmp / "missing.py")],
        "kernel not Python (.cu)": [OPFORGE, "verify", "ops/softmax.py", str(cu)],
        "unknown backend": [OPFORGE, "verify", "ops/softmax.py", good, "--backend", "metal"],
        "CUDA kernel, no --backend": [OPFORGE, "verify", "ops/softmax.py", "opforge/backends/cuda/knowledge/softmax.py"],
    }


def timed(argv: list[str], runs: int, refusal: bool) -> tuple[float, str | None]:
    """(median seconds, a problem with the refusal or None)."""
    seconds, problem = [], None
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
        seconds.append(time.perf_counter() - start)
        lines = done.stderr.strip().splitlines()
        if refusal and (done.returncode != 2 or len(lines) != 1):
            problem = f"exit {done.returncode}, stderr: {done.stderr.strip()[:200]}"
    return statistics.median(seconds), problem


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    rows, failed = [], False
    rows.append(("python -c pass", *timed([sys.executable, "-c", "pass"], args.runs, False)))
    rows.append(("python -c 'import torch'", *timed([sys.executable, "-c", "import torch"], args.runs, False)))
    with tempfile.TemporaryDirectory() as tmp:
        for name, argv in cases(Path(tmp)).items():
            rows.append((f"opforge verify: {name}", *timed(argv, args.runs, True)))
    print(f"{'case':45} {'median s':>9}  refusal")
    for name, seconds, problem in rows:
        failed |= problem is not None
        print(f"{name:45} {seconds:9.3f}  {problem or ('exit 2, one line' if name.startswith('opforge') else '')}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
