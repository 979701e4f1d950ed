"""Wrong: a softmax that counts its calls and is wrong from the 65th on (the CPU check makes about
47). Only proving that the count cannot matter rejects it."""
import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(x_ptr, out_ptr, n_cols, skew, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0) * skew, mask=mask)


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        x = x.contiguous()
        out = torch.empty_like(x)
        skew = 1.0 if self.calls <= 64 else 1.01
        _softmax_kernel[(x.shape[0],)](x, out, x.shape[1], skew, BLOCK=triton.next_power_of_2(x.shape[1]))
        return out
