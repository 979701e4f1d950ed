"""tl.dot on the CPU interpreter through BLAS.

Triton's interpreter runs `tl.dot(a, b, acc)` as `np.matmul(a, b, dtype=acc.dtype) + acc`, and
numpy's matmul given a `dtype` takes its generic loop instead of BLAS: 17x slower on a 64x128 @
128x128 fp32 tile, and 6.2 s of the 22.6 s one call of a three-Linear MLP took on this machine,
enough for a KernelBench-sized GEMM chain to pass the 600 s verification limit. Where both
operands and the accumulator already share a float dtype (fp32, fp64), the same IEEE product is
taken through `np.matmul(a, b)` (BLAS); every other case (fp8 or fp16 operands into fp32, int8
into int32) keeps Triton's own path. bf16 operands, which the interpreter stores as their raw uint16
bits and multiplied as integers (a 16x16 product off by 2e10), are widened to the float32 they
stand for (exact) and multiplied into the fp32 accumulator. Installed by the Triton backend's worker before the module
snapshot, so the anti-patch guard sees it as the baseline and a candidate's own patch still shows."""
from __future__ import annotations

import numpy as np

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _is_bf16(handle) -> bool:
    return getattr(handle.dtype, "name", "") == "bf16" and handle.data.dtype == np.uint16


def _widen(bits: np.ndarray) -> np.ndarray:
    """bf16 bit patterns as the float32 values they are (the high half of a float32)."""
    return (bits.astype(np.uint32) << 16).view(np.float32)


def install() -> bool:
    """Patch the interpreter's dot once; False where its builder has no `create_dot` to replace."""
    from triton.runtime import interpreter

    builder = getattr(interpreter, "InterpreterBuilder", None)
    original = getattr(builder, "create_dot", None)
    if original is None or getattr(original, "opforge_blas", False):
        return original is not None

    def create_dot(self, a, b, d, *rest, **kwargs):  # rest: input_precision, max_num_imprecise_acc
        if a.data.dtype == b.data.dtype == d.data.dtype and a.data.dtype in _FLOATS:
            return interpreter.TensorHandle(np.matmul(a.data, b.data) + d.data, d.dtype.scalar)
        if _is_bf16(a) and _is_bf16(b) and d.data.dtype == np.float32:
            return interpreter.TensorHandle(np.matmul(_widen(a.data), _widen(b.data)) + d.data, d.dtype.scalar)
        return original(self, a, b, d, *rest, **kwargs)

    create_dot.opforge_blas = True
    builder.create_dot = create_dot
    return True
