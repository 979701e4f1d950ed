"""Correct control of inplace_neighbour: read the input, write the output."""
import torch
import triton
import triton.language as tl


@triton.jit
def _adjacent(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    here = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    right = tl.load(x_ptr + offs + 1, mask=offs + 1 < n, other=0.0)
    tl.store(out_ptr + offs, here + right, mask=offs < n)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        _adjacent[(triton.cdiv(x.numel(), 32),)](x, out, x.numel(), BLOCK=32)
        return out
