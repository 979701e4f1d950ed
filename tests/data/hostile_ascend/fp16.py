"""Hostile: computes a float32 op in float16 inside the kernel."""
import torch
import triton
import triton.language as tl

CORES = 40


@triton.jit
def _silu(x_ptr, y_ptr, n, BLOCK: tl.constexpr, CORES_C: tl.constexpr):
    pid = tl.program_id(0)
    n_blocks = tl.cdiv(n, BLOCK)
    for blk in tl.range(pid, n_blocks, CORES_C):
        offs = blk * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float16)
        tl.store(y_ptr + offs, (x / (1.0 + tl.exp(-x))).to(tl.float32), mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        xc = x.contiguous()
        y = torch.empty_like(xc)
        _silu[(CORES,)](xc, y, xc.numel(), BLOCK=1024, CORES_C=CORES)
        return y
