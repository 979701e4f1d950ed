"""Compiled = executed (#32 item 2): a constexpr keyed on an attribute only the interpreter's
kernel object has. The GPU build compiles the branch that writes zeros; the CPU run interprets the
softmax."""
import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr, CPU: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    if CPU:
        x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=float("-inf"))
        e = tl.exp(x - tl.max(x, axis=0))
        tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)
    else:
        tl.store(out_ptr + row * n_cols + cols, tl.zeros([BLOCK], dtype=tl.float32), mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        _softmax_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]),
                                       CPU=hasattr(_softmax_kernel, "rewriter"))
        return out
