"""Hostile: each program handles only its first block; the rest of the output stays unwritten."""
import torch
import triton
import triton.language as tl

CORES = 40


@triton.jit
def _silu(x_ptr, y_ptr, n, BLOCK: tl.constexpr, CORES_C: tl.constexpr):
    pid = tl.program_id(0)
    n_blocks = tl.cdiv(n, BLOCK)
    for blk in tl.range(pid, tl.minimum(n_blocks, CORES_C), CORES_C):
        offs = blk * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        tl.store(y_ptr + offs, x / (1.0 + tl.exp(-x)), mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        xc = x.contiguous()
        y = torch.empty_like(xc)
        n = xc.numel()
        _silu[(CORES,)](xc, y, n, BLOCK=1024, CORES_C=CORES)
        return y
