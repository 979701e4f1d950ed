"""`make demo`: the offline main job, as a user would run it from the shell.

With no LLM endpoint configured, `opforge batch` runs the agent loop on a few suite ops: the offline
expert drafts, the sandboxed harness verifies, the best kernels are promoted (./.opforge/opforge.db);
`opforge run --backend cuda` does the same for a CUDA C++ softmax (nvcc, then the CPU emulator), and a
CUDA kernel the emulator cannot run exits 3; `--backend triton_ascend` for a Triton-Ascend softmax
(Huawei's front end, then triton-ascend's interpreter), and an AscendC project exits 3 after its
static checks (the rest needs CANN); a cheating kernel is shown being rejected by `opforge verify`; the registry is listed; and the
promoted kernels are exported as a library (./.opforge/kernels_generated, with its wheel) whose
self-check runs every op against its reference (the Triton-Ascend softmax too, as the library's npu
entry under triton-ascend's interpreter)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OPFORGE = str(Path(sys.executable).parent / "opforge")
OPS = ("silu", "softmax", "rms_norm", "matmul")
EXPORT = ROOT / ".opforge" / "kernels_generated"


def opforge(*args: str) -> int:
    print(f"\n$ opforge {' '.join(args)}", flush=True)
    return subprocess.run([OPFORGE, *args], cwd=ROOT).returncode


def main() -> int:
    for key in ("OPFORGE_LLM_BASE_URL", "OPFORGE_LLM_MODEL"):  # the demo is the offline default
        os.environ.pop(key, None)
    # The agent loop over four ops, two at a time (a second `make demo` skips what is verified).
    failures = opforge("batch", *(f"ops/{op}.py" for op in OPS), "--jobs", "2") != 0
    # The same loop in CUDA C++: the expert's CUDA emitter drafts, nvcc builds the sm_90 cubin, and
    # opforge's CUDA emulator checks the numerics on this CPU (level `emulated`).
    failures += opforge("run", "ops/softmax.py", "--backend", "cuda") != 0
    # A CUDA kernel with inline PTX compiles, but the emulator cannot run asm: exit 3, not verifiable here.
    failures += opforge("verify", "ops/softmax.py", "tests/data/kernels/cuda_asm.py", "--backend", "cuda",
                        "--trials", "1") != 3
    # Ascend: the expert's Triton-Ascend softmax through Huawei's front end (bishengir-compile plans the
    # unified buffer; hivmc, which only CANN has, is skipped) and triton-ascend's interpreter: emulated.
    failures += opforge("run", "ops/softmax.py", "--backend", "triton_ascend") != 0
    # An AscendC Add project passes the static checks; building and running it needs CANN: exit 3.
    failures += opforge("verify", "tests/data/ascendc/add_spec.py", "tests/data/ascendc/direct_add.py",
                        "--backend", "ascendc") != 3
    # A kernel that launches Triton for show and returns PyTorch's answer: rejected, exit code 1.
    failures += opforge("verify", "tests/data/specs/tiny_softmax.py", "tests/data/kernels/cheat_torch_compute.py") != 1
    opforge("kernels")
    # What leaves the workbench: the promoted kernels as a library, checked against the references
    # with the kernels themselves running (fallback forbidden) under Triton's interpreter.
    failures += opforge("export", "--out", str(EXPORT), "--wheel") != 0
    print(f"\n$ TRITON_INTERPRET=1 KERNELS_GENERATED_NO_FALLBACK=1 python -m kernels_generated.check  # in {EXPORT}",
          flush=True)
    env = os.environ | {"TRITON_INTERPRET": "1", "KERNELS_GENERATED_NO_FALLBACK": "1", "PYTHONPATH": str(EXPORT)}
    failures += subprocess.run([sys.executable, "-W", "ignore", "-m", "kernels_generated.check"], cwd=EXPORT,
                               env=env).returncode != 0
    # The promoted Triton-Ascend softmax is the library's npu entry: run it on this CPU under
    # triton-ascend's interpreter (its prefix first on the path), fallback forbidden.
    from opforge.backends.triton_ascend import toolchain

    prefix = toolchain.prefix()
    print(f"\n$ PYTHONPATH={prefix} TRITON_INTERPRET=1 KERNELS_GENERATED_NO_FALLBACK=1 "
          f"python -m kernels_generated.check --device npu-interpreter  # in {EXPORT}", flush=True)
    failures += subprocess.run([sys.executable, "-W", "ignore", "-m", "kernels_generated.check", "--device",
                                "npu-interpreter"], cwd=EXPORT,
                               env=env | {"PYTHONPATH": f"{prefix}{os.pathsep}{EXPORT}"}).returncode != 0
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
