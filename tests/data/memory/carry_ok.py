"""Correct control of carry_chain: each program sums the blocks before its own itself (reads x only)."""
import torch
import triton
import triton.language as tl


@triton.jit
def _scan(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    carry = 0.0
    for b in range(0, pid):
        prev = b * BLOCK + tl.arange(0, BLOCK)
        carry += tl.sum(tl.load(x_ptr + prev, mask=prev < n, other=0.0))
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    local = tl.cumsum(tl.load(x_ptr + offs, mask=mask, other=0.0), 0)
    tl.store(out_ptr + offs, local + carry, mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        _scan[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
        return out
