"""A correct RMSNorm kernel whose module ignores its constructor: the weight is sized for the
verified problem (hidden=48) only, as generated code sometimes is. Export must not run it for
other constructor arguments."""
import torch
import triton
import triton.language as tl


@triton.jit
def _rms_kernel(x_ptr, w_ptr, out_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < N
    x = tl.load(x_ptr + row * N + offs, mask=mask, other=0.0)
    w = tl.load(w_ptr + offs, mask=mask, other=0.0)
    mean_sq = tl.sum(x * x, axis=0) / N
    tl.store(out_ptr + row * N + offs, x * (1.0 / tl.sqrt(mean_sq + 1e-6)) * w, mask=mask)


def rms_norm(x, weight):
    rows = x.contiguous().view(-1, x.shape[-1])
    out = torch.empty_like(rows)
    _rms_kernel[(rows.shape[0],)](rows, weight, out, rows.shape[1], BLOCK=triton.next_power_of_2(rows.shape[1]))
    return out.view(x.shape)


class ModelNew(torch.nn.Module):
    def __init__(self, *args):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.empty(48), requires_grad=False)

    def forward(self, x):
        return rms_norm(x, self.weight)
