"""A correct softmax with a kernel of its own for narrow rows (only the spec's variant has them)
and a constexpr that differs between cases (EVEN): the control beside hostile_variant_uncompilable
and hostile_interp_branch. Every launch of every case is compiled by the build, so it verifies."""
import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    if EVEN:
        x = tl.load(x_ptr + row * n_cols + cols)
    else:
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=cols < n_cols)


@triton.jit
def _narrow_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    total = tl.sum(e, axis=0)
    for _ in range(1):
        total = tl.maximum(total, 1e-30)
    tl.store(out_ptr + row * n_cols + cols, e / total, mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        block = triton.next_power_of_2(x.shape[1])
        if x.shape[1] < 20:
            _narrow_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=block)
        else:
            _softmax_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=block, EVEN=block == x.shape[1])
        return out
