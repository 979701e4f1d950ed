"""Runs under the interpreter but not on a GPU: tl.arange needs a power-of-two range there."""
import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(x_ptr, out_ptr, N_COLS: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, N_COLS)
    x = tl.load(x_ptr + row * N_COLS + cols)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * N_COLS + cols, e / tl.sum(e, axis=0))


class ModelNew(torch.nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        _softmax_kernel[(x.shape[0],)](x, out, N_COLS=x.shape[1])
        return out
