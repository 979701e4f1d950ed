"""Wrong: launches at most 64 programs, one per row: rows past the 64th are never computed."""
import torch
import triton
import triton.language as tl


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
        out = torch.zeros_like(x)
        _softmax_kernel[(min(x.shape[0], 64),)](x, out, x.stride(0), x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
        return out
