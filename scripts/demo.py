"""`make demo`: the offline main job, as a user would run it from the shell.

With no LLM endpoint configured, `opforge run` drafts kernels for a few suite ops with the offline
expert, verifies them in the sandbox and promotes them (./.opforge/opforge.db); then a cheating
kernel is shown being rejected by `opforge verify`, and the registry is listed."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OPFORGE = str(Path(sys.executable).parent / "opforge")
OPS = ("silu", "softmax", "rms_norm", "matmul")


def opforge(*args: str) -> int:
    print(f"\n$ opforge {' '.join(args)}", flush=True)
    return subprocess.run([OPFORGE, *args], cwd=ROOT).returncode


def main() -> int:
    for key in ("OPFORGE_LLM_BASE_URL", "OPFORGE_LLM_MODEL"):  # the demo is the offline default
        os.environ.pop(key, None)
    failures = sum(opforge("run", f"ops/{op}.py") != 0 for op in OPS)
    # A kernel that launches Triton for show and returns PyTorch's answer: rejected, exit code 1.
    failures += opforge("verify", "tests/data/specs/tiny_softmax.py", "tests/data/kernels/cheat_torch_compute.py") != 1
    opforge("kernels")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
