"""Wrong: a prefix sum whose carry is the running total an atomic add returns: the blocks that ran
before, which are the blocks before only in grid order. No plain access races; the order does."""
import torch
import triton
import triton.language as tl


@triton.jit
def _scan(x_ptr, total_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    carry = tl.atomic_add(total_ptr, tl.sum(x))
    tl.store(out_ptr + offs, tl.cumsum(x, 0) + carry, mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        total = torch.zeros(1, dtype=x.dtype, device=x.device)
        _scan[(triton.cdiv(x.numel(), 64),)](x, total, out, x.numel(), BLOCK=64)
        return out
