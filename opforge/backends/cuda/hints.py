"""What the reflect node tells the next CUDA draft: the hint for an nvcc build error and one per finding
code of the CUDA emulator (its one-line reasons start with the code: `race: ...`)."""
from __future__ import annotations

import re

from opforge.harness.plugin import matched_hints

BUILD = ("nvcc rejected CUDA_SRC: fix the line it names (the error quotes it) and keep the "
         "extern \"C\" launchers' signatures.")
# The CUDA emulator's findings, by the code its one-line reason starts with (CUDA runs only): each
# says what to look for, in place of the check's hint.
REASON_HINTS = {
    "race": "The output depends on the thread schedule: put __syncthreads() between shared-memory writes "
            "and other threads' reads (and before the buffer is reused), and never let two threads write "
            "the same element; float atomics are order-dependent.",
    "deadlock": "Some threads never reach the barrier or shuffle the others wait at: no __syncthreads() or "
                "__shfl*_sync inside a branch only some threads take or after an early return; a full mask "
                "0xffffffff needs all 32 lanes, so use a block size that is a multiple of 32.",
    "out-of-bounds": "A kernel touched memory outside a buffer: bounds-check every index (rows or columns "
                     "shorter than the block, the last partial block), use int64 offsets, and size shared "
                     "arrays for the block size the launcher uses.",
    "unsupported": "The CPU emulator cannot run this construct (inline asm, mma/wmma/wgmma, cp.async, TMA, "
                   "clusters, grid sync), so the kernel cannot be verified here: write it in plain CUDA C++.",
    "step-limit": "A kernel never finished in the emulator: check loop bounds and strides (an index that never "
                  "reaches its bound, a grid-stride loop with stride 0).",
    "emu-build": "g++ could not build CUDA_SRC for the emulator: fix the line it names.",
    "const-write": "A kernel wrote into a buffer its launcher takes as const: write outputs only through "
                   "non-const pointers and never cast const away.",
    "arguments": "forward called a launcher with the wrong arguments: pass exactly its parameters but the "
                 "stream, tensors of the pointee's dtype for pointers and Python numbers for scalars.",
    "stateful": "A call left state the next call starts from changed (a __device__ variable, a static, a Python "
                "attribute: a counter, a cache, a flag); a GPU keeps __device__ memory from call to call. Reset "
                "such state within the call (a reset launch first, or the last block), or compute from the inputs "
                "alone.",
}
_CODE = re.compile(r"(?:^|: )(" + "|".join(map(re.escape, REASON_HINTS)) + r"): ")


def reason_hints(reasons: list[str]) -> list[str]:
    return matched_hints(_CODE, REASON_HINTS, reasons)
