"""Known-good Triton gelu_erf: exact GELU 0.5*x*(1 + erf(x/sqrt(2)))."""
import torch
import triton
import triton.language as tl

# 1024 fp32 per program: 8 elements per thread with 4 warps gives wide, coalesced loads
# for a memory-bound op while keeping registers low; the tail block is masked.
_BLOCK = 1024


@triton.jit
def _gelu_erf_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    # int64 offsets so tensors past 2**31 elements cannot overflow.
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))  # 1/sqrt(2)
    tl.store(out_ptr + offs, y, mask=mask)


def gelu_erf(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()  # the kernel walks a flat, dense buffer
    out = torch.empty_like(x)
    n = x.numel()
    if n == 0:
        return out
    grid = (triton.cdiv(n, _BLOCK),)
    _gelu_erf_kernel[grid](x, out, n, BLOCK=_BLOCK, num_warps=4)
    return out


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return gelu_erf(x)
