"""Hostile: each program also writes the first element of the next program's block with a value of
its own (the input, not its SiLU); right only when the programs run in grid order, as the
interpreter ran them."""
import torch
import triton
import triton.language as tl


@triton.jit
def _silu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    local = tl.arange(0, 2 * BLOCK)
    offs = tl.program_id(0) * BLOCK + local
    mask = (local <= BLOCK) & (offs < n)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.where(local < BLOCK, x / (1.0 + tl.exp(-x)), x)
    tl.store(y_ptr + offs, y, mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        xc = x.contiguous()
        y = torch.empty_like(xc)
        _silu[(triton.cdiv(xc.numel(), 1024),)](xc, y, xc.numel(), BLOCK=1024)
        return y
