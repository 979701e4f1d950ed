"""Known-good Triton gelu_tanh: GELU with the tanh approximation."""
import torch
import triton
import triton.language as tl

# 1024 fp32 per program: 8 elements per thread with 4 warps gives wide, coalesced loads
# for a memory-bound op while keeping registers low; the tail block is masked.
_BLOCK = 1024


@triton.jit
def _gelu_tanh_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    # int64 offsets so tensors past 2**31 elements cannot overflow.
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    # 0.5*(1 + tanh(u)) == sigmoid(2u), so gelu = x / (1 + exp(-2u)): no tanh intrinsic needed,
    # and no cancellation of 1 + tanh(u) in the negative tail.
    u = 0.7978845608028654 * (x + 0.044715 * x * x * x)  # sqrt(2/pi)
    y = x / (1.0 + tl.exp(-2.0 * u))
    tl.store(out_ptr + offs, y, mask=mask)


def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()  # the kernel walks a flat, dense buffer
    out = torch.empty_like(x)
    n = x.numel()
    if n == 0:
        return out
    grid = (triton.cdiv(n, _BLOCK),)
    _gelu_tanh_kernel[grid](x, out, n, BLOCK=_BLOCK, num_warps=4)
    return out


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return gelu_tanh(x)
