"""Compiled = executed (#32 item 2): narrow rows (only the spec's variant has them) go to a kernel
whose loop `break`s, which the interpreter runs and Triton's GPU compiler refuses; the build used to
record only the main case, so that kernel was never compiled."""
import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


@triton.jit
def _narrow_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    total = tl.sum(e, axis=0)
    for _ in range(4):
        if total > 0:
            break
    tl.store(out_ptr + row * n_cols + cols, e / total, mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        block = triton.next_power_of_2(x.shape[1])
        kernel = _narrow_kernel if x.shape[1] < 20 else _softmax_kernel
        kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=block)
        return out
