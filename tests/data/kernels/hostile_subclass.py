"""Class 3, outputs: a tensor subclass is returned instead of a plain tensor (a subclass can
compute lazily, after the guard has ended). Outputs must be exact torch.Tensors. Static checks
reject `as_subclass`; verified with them skipped so the output-type check is what rejects it."""
import torch
import triton
import triton.language as tl


class Deferred(torch.Tensor):
    pass


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
        return out.as_subclass(Deferred)
