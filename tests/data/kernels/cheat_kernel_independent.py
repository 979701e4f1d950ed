"""Cheat: launches a kernel for show, but the output is computed in Python (item() and element
assignment only), so it does not depend on the kernel at all."""
import math

import torch
import triton
import triton.language as tl


@triton.jit
def _busy_kernel(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros([BLOCK], dtype=tl.float32), mask=offs < n)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()  # the kernel indexes rows by n_cols: a strided input must be copied first
        scratch = torch.empty(256, device=x.device)
        _busy_kernel[(1,)](scratch, 256, BLOCK=256)
        out = torch.empty_like(x)
        for i in range(x.shape[0]):
            row = [x[i, j].item() for j in range(x.shape[1])]
            m = max(row)
            e = [math.exp(v - m) for v in row]
            for j in range(x.shape[1]):
                out[i, j] = e[j] / sum(e)
        return out
