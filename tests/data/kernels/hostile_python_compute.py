"""Class 3, guards: computes the whole softmax in Python from float() of every element (each read
is aten._local_scalar_dense, a "layout" op the dispatch guard lets through) and moves the result
out with a copy kernel, so a Triton launch happens and the no-op probe fails too. Passes the static
check: only the count of host reads gives it away."""
import math

import torch
import triton
import triton.language as tl


@triton.jit
def _copy_kernel(src_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        rows = []
        for row in x:
            vals = [float(v) for v in row]
            top = max(vals)
            e = [math.exp(v - top) for v in vals]
            s = sum(e)
            rows.append([v / s for v in e])
        src = torch.tensor(rows, dtype=x.dtype, device=x.device)
        out = torch.empty_like(src)
        _copy_kernel[(triton.cdiv(src.numel(), 1024),)](src, out, src.numel(), BLOCK=1024)
        return out
