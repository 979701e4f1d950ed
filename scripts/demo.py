"""`make demo`: the offline main job, as a user would run it from the shell.

Verifies a few of the suite's known-good kernels and one cheating kernel with `opforge verify`
(recorded in ./.opforge/opforge.db), then lists the registry."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OPFORGE = str(Path(sys.executable).parent / "opforge")
OPS = ("softmax", "rms_norm", "matmul")


def opforge(*args: str) -> int:
    print(f"\n$ opforge {' '.join(args)}", flush=True)
    return subprocess.run([OPFORGE, *args], cwd=ROOT).returncode


def main() -> int:
    failures = 0
    for op in OPS:
        failures += opforge("verify", f"ops/{op}.py", f"knowledge/triton/{op}.py") != 0
    # A kernel that launches Triton for show and returns PyTorch's answer: rejected, exit code 1.
    cheat = opforge("verify", "tests/data/specs/tiny_softmax.py", "tests/data/kernels/cheat_torch_compute.py")
    failures += cheat != 1
    opforge("kernels")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
