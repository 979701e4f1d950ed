"""What the CUDA static check costs a candidate, with the host-code parse (backends/cuda/host_ast.py:
g++ -E, then libclang) and without it (the token rules alone, as before the parse), on the repo's
CUDA candidates: the known-good kernels (opforge/backends/cuda/knowledge, tests/data/kernels/
cuda_softmax.py) and the hostile ones (tests/data/kernels/hostile_cuda_*.py). The parse's cache is
cleared before each timing, so every cell is a first parse; the Python side's first call (torch's
import, the resolver's tables) is paid once before any timing.

    .venv/bin/python benchmarks/cuda_static.py

Exit status: 0 (a measurement); 1 when a known-good kernel gets a reason.
"""
from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from opforge.backends.cuda import host_ast  # noqa: E402
from opforge.backends.cuda.static import check_cuda_candidate  # noqa: E402


def timed(source: str, parse: bool) -> tuple[float, list[str]]:
    real = host_ast.read
    host_ast._cached.cache_clear()
    if not parse:
        host_ast.read = lambda text, host_code=True: host_ast.Parsed((), frozenset(), ())
    try:
        began = time.perf_counter()
        reasons = check_cuda_candidate(source, float32_spec=True).reasons
        return time.perf_counter() - began, reasons
    finally:
        host_ast.read = real


def main() -> int:
    good = [ROOT / "tests/data/kernels/cuda_softmax.py", *sorted((ROOT / "opforge/backends/cuda/knowledge").glob("*.py"))]
    hostile = sorted((ROOT / "tests/data/kernels").glob("hostile_cuda_*.py"))
    timed(good[0].read_text(), parse=False)  # the Python side's first call
    bad = 0
    for label, paths in (("known-good", good), ("hostile", hostile)):
        before, after = [], []
        for path in paths:
            source = path.read_text()
            before.append(timed(source, parse=False)[0])
            seconds, reasons = timed(source, parse=True)
            after.append(seconds)
            if label == "known-good" and reasons:
                print(f"FALSE REJECTION {path.name}: {reasons}")
                bad += 1
        print(f"{label:10s} {len(paths):3d} candidates: tokens only median {statistics.median(before) * 1e3:6.1f} ms, "
              f"with the parse median {statistics.median(after) * 1e3:6.1f} ms, max {max(after) * 1e3:6.1f} ms")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
