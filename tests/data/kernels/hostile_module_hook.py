"""Class 1, process: a global module forward hook (on every nn.Module, the reference's too when
they shared a process) that would overwrite outputs. Now it can only reach the candidate's own
modules, and the global hook itself is global state the judge checks."""
import torch
import triton
import triton.language as tl
from torch.nn.modules import module as _module

_module.register_module_forward_hook(lambda mod, args, out: out)


@triton.jit
def _softmax_kernel(x_ptr, out_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        _softmax_kernel[(x.shape[0],)](x, out, x.stride(0), x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
        return out
