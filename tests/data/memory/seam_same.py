"""Correct control of seam_conflict: both programs write the seam's SiLU, the same bytes, so the
order cannot matter (a benign conflict, not a race)."""
import torch
import triton
import triton.language as tl


@triton.jit
def _silu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    local = tl.arange(0, 2 * BLOCK)
    offs = tl.program_id(0) * BLOCK + local
    mask = (local <= BLOCK) & (offs < n)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x / (1.0 + tl.exp(-x)), mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        _silu[(triton.cdiv(x.numel(), 32),)](x, y, x.numel(), BLOCK=32)
        return y
