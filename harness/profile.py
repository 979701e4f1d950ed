"""GPU timing of a verified candidate against PyTorch eager and torch.compile, in one process.

Uses triton.testing.do_bench: it flushes L2 between runs (writes a 256 MB buffer), warms up for
25 ms and reports the median of ~100 ms worth of timed runs from CUDA events. Called only on a GPU;
without one the verdict's timings are null and say why (never a made-up number).
"""
from __future__ import annotations

from typing import Any

import torch


def _bench(fn) -> float:
    import triton.testing

    with torch.no_grad():
        return float(triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median"))


def profile_models(new_model: Any, ref_model: Any, inputs: list) -> dict:
    kernel_ms = _bench(lambda: new_model(*inputs))
    eager_ms = _bench(lambda: ref_model(*inputs))
    compile_ms, note = None, None
    try:
        compiled = torch.compile(ref_model)
        with torch.no_grad():
            compiled(*inputs)
        compile_ms = _bench(lambda: compiled(*inputs))
    except Exception as exc:  # torch.compile can fail on exotic references; eager still stands
        note = f"torch.compile baseline failed: {type(exc).__name__}: {str(exc)[:200]}"
    return {
        "kernel_ms": kernel_ms,
        "eager_ms": eager_ms,
        "compile_ms": compile_ms,
        "speedup_eager": eager_ms / kernel_ms if kernel_ms else None,
        "speedup_compile": compile_ms / kernel_ms if kernel_ms and compile_ms else None,
        "method": "triton.testing.do_bench median (L2 flushed, 25 ms warm-up, 100 ms of runs)",
        "note": note,
    }
