"""A correct softmax that takes its exponential as a constexpr @triton.jit function (as kernels
pass activations): the launch key names that function by its code, the same in the build (a
JITFunction) and the interpreted run (an InterpretedFunction); the control for launch keys."""
import torch
import triton
import triton.language as tl


@triton.jit
def _exp(x):
    return tl.exp(x)


@triton.jit
def _softmax_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr, EXP: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=float("-inf"))
    e = EXP(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        _softmax_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]), EXP=_exp)
        return out
