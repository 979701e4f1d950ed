"""Wrong: the load's mask lets one element past the end through (offs <= n); the masked store
hides it."""
import torch
import triton
import triton.language as tl


@triton.jit
def _silu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs <= n, other=0.0)
    tl.store(y_ptr + offs, x / (1.0 + tl.exp(-x)), mask=offs < n)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        _silu[(triton.cdiv(x.numel(), 32),)](x, y, x.numel(), BLOCK=32)
        return y
