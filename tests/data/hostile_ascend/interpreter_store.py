"""Hostile: the kernel only copies its input; a patch of the interpreter's store computes SiLU in
numpy, so the interpreted run looks right (needs the static checks skipped to get this far)."""
import numpy as np
import torch
import triton
import triton.language as tl
import triton.runtime.interpreter as interp

CORES = 40


@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr, CORES_C: tl.constexpr):
    pid = tl.program_id(0)
    for blk in tl.range(pid, tl.cdiv(n, BLOCK), CORES_C):
        offs = blk * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


_store = interp.InterpreterBuilder.create_masked_store


def _silu_store(self, ptrs, value, mask, *rest):
    value.data = value.data / (1.0 + np.exp(-value.data))
    return _store(self, ptrs, value, mask, *rest)


interp.InterpreterBuilder.create_masked_store = _silu_store


class ModelNew(torch.nn.Module):
    def forward(self, x):
        xc = x.contiguous()
        y = torch.empty_like(xc)
        _copy[(CORES,)](xc, y, xc.numel(), BLOCK=1024, CORES_C=CORES)
        return y
