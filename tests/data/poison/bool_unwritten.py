"""Wrong: stores only the True elements of a bool output taken from torch.empty, counting on the
allocation to hold False (0) elsewhere."""
import torch
import triton
import triton.language as tl


@triton.jit
def _positive_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, x > 0, mask=(offs < n) & (x > 0))


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty(x.shape, dtype=torch.bool, device=x.device)
        _positive_kernel[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
        return out
