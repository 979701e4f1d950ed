"""Class 3, below the dispatcher: the softmax computed in Python on `x.tolist()` (no ATen op
the dispatch guard could see), written back through a factory call, with a kernel launched for
show. Static checks forbid `.tolist`; this file is verified with them skipped so the runtime
tripwire is what rejects it."""
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
        for row in x.tolist():
            top = max(row)
            e = [math.exp(v - top) for v in row]
            rows.append([v / sum(e) for v in e])
        done = torch.tensor(rows, dtype=x.dtype, device=x.device)
        out = torch.empty_like(done)
        _copy_kernel[(triton.cdiv(done.numel(), 1024),)](done, out, done.numel(), BLOCK=1024)
        return out
