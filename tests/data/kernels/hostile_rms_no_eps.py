"""Class 4, numerics: RMSNorm without eps. Right for activations of order 1, off by far for
small ones (and 0/0 on a zero row)."""
import torch
import triton
import triton.language as tl


@triton.jit
def _rms_kernel(x_ptr, w_ptr, out_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    rms = tl.sqrt(tl.sum(x * x, axis=0) / n_cols)
    tl.store(out_ptr + row * n_cols + cols, x / rms * w, mask=mask)


class ModelNew(torch.nn.Module):
    def __init__(self, hidden, eps=1e-5):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(hidden))

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        _rms_kernel[(x.shape[0],)](x, self.weight, out, x.stride(0), x.shape[1],
                                   BLOCK=triton.next_power_of_2(x.shape[1]))
        return out
