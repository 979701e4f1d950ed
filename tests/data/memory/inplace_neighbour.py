"""Wrong: x copied to the output, then updated in place; each program reads the first element of
the next block, which the next program overwrites (right only when programs run in grid order)."""
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.jit
def _adjacent(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    here = tl.load(out_ptr + offs, mask=offs < n, other=0.0)
    right = tl.load(out_ptr + offs + 1, mask=offs + 1 < n, other=0.0)
    tl.store(out_ptr + offs, here + right, mask=offs < n)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        grid = (triton.cdiv(x.numel(), 32),)
        _copy[grid](x, out, x.numel(), BLOCK=32)
        _adjacent[grid](out, x.numel(), BLOCK=32)
        return out
