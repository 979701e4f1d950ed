"""Hostile: computes in place into the input and returns it."""
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
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        tl.store(y_ptr + offs, x / (1.0 + tl.exp(-x)), mask=mask)



class ModelNew(torch.nn.Module):
    def forward(self, x):
        _silu[(CORES,)](x, x, x.numel(), BLOCK=1024, CORES_C=CORES)  # in place: no output allocation
        return x.view(x.shape)
