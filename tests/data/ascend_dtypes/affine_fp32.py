"""The control beside affine_fp64.py: the same kernel in fp32, which Atlas A2/A3 compute."""
import torch
import triton
import triton.language as tl

TILE = 1024


@triton.jit
def _affine(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x * 2.0 + 1.0, mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        _affine[(triton.cdiv(x.numel(), TILE),)](x, y, x.numel(), BLOCK=TILE)
        return y
