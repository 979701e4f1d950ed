"""The translator's rewrites for the launch-resource model (include/emu_limits.h), inside device code:

- `OPFORGE_EMU_FRAME();` first in every `__device__` function body: the guard that charges the
  function's ptxas stack frame to the calling thread's chain, so a recursion deeper than
  cudaLimitStackSize allows faults as on a GPU (each emulated thread has a 256 KB host stack);
- `malloc(` / `free(` in `__device__` and `__global__` bodies become the device heap's
  (`cudaLimitMallocHeapSize`, 8 MB by default: NULL past it); host code keeps the process's heap.

Zero-width insertions and same-line replacements: CUDA_SRC's line numbers are kept.
"""
from __future__ import annotations

import re

_HEAP_CALL = re.compile(r"(?<![\w.:>])(malloc|free)\s*\(")
_NO_GUARD = re.compile(r"\b(?:constexpr|consteval|__global__)\b")


def _header(code: str, start: int) -> str:
    """The declaration before a body's `{`: back to the previous `;`, `{` or `}`."""
    cut = max(code.rfind(";", 0, start), code.rfind("{", 0, start), code.rfind("}", 0, start))
    return code[cut + 1:start]


def edits(code: str, bodies: list[tuple[int, int]]) -> list[tuple[int, int, str]]:
    """(start, end, text) edits for `code` (comments and strings blanked) given its function bodies."""
    out = []
    for start, end in bodies:
        header = _header(code, start)
        device = re.search(r"\b__device__\b", header) is not None
        if not device and not re.search(r"\b__global__\b", header):
            continue
        if device and not _NO_GUARD.search(header):
            out.append((start + 1, start + 1, " OPFORGE_EMU_FRAME();"))
        for m in _HEAP_CALL.finditer(code, start, end):
            name = m.group(1)
            out.append((m.start(1), m.end(1), f"::opforge_emu::device_{name}"))
    return out
