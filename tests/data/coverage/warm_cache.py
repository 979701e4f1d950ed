"""Correct control: state kept across calls that stops changing once warm (a block size chosen
per row width at the first call of that width, and a flag that the first call was made)."""
import torch
import triton
import triton.language as tl

_BLOCKS = {}


@triton.jit
def _softmax_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.warm = False

    def forward(self, x):
        self.warm = True
        x = x.contiguous()
        out = torch.empty_like(x)
        block = _BLOCKS.setdefault(x.shape[1], triton.next_power_of_2(x.shape[1]))
        _softmax_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=block)
        return out
