"""Wrong: a prefix sum whose program i adds the last element program i-1 stored (right only in grid order)."""
import torch
import triton
import triton.language as tl


@triton.jit
def _scan(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    local = tl.cumsum(tl.load(x_ptr + offs, mask=mask, other=0.0), 0)
    carry = tl.load(out_ptr + pid * BLOCK - 1, mask=pid > 0, other=0.0)  # what program pid-1 stored
    tl.store(out_ptr + offs, local + carry, mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        _scan[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
        return out
