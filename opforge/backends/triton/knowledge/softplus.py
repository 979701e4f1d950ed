"""Known-good Triton softplus: log(1 + exp(x)) with PyTorch defaults (beta=1, threshold=20)."""
import torch
import triton
import triton.language as tl

# 1024 fp32 per program: 8 elements per thread with 4 warps gives wide, coalesced loads
# for a memory-bound op while keeping registers low; the tail block is masked.
_BLOCK = 1024


@triton.jit
def _softplus_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    # int64 offsets so tensors past 2**31 elements cannot overflow.
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    # Stable form max(x, 0) + log1p(exp(-|x|)); exp never overflows. Triton has no log1p, so use
    # the log(u) * t / (u - 1) trick (u = 1 + t), exact to a few ulp even when t is tiny.
    t = tl.exp(-tl.abs(x))
    u = 1.0 + t
    d = tl.where(u == 1.0, 1.0, u - 1.0)
    log1p_t = tl.where(u == 1.0, t, tl.log(u) * (t / d))
    y = tl.maximum(x, 0.0) + log1p_t
    y = tl.where(x > 20.0, x, y)  # PyTorch returns x itself above the threshold
    tl.store(out_ptr + offs, y, mask=mask)


def softplus(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()  # the kernel walks a flat, dense buffer
    out = torch.empty_like(x)
    n = x.numel()
    if n == 0:
        return out
    grid = (triton.cdiv(n, _BLOCK),)
    _softplus_kernel[grid](x, out, n, BLOCK=_BLOCK, num_warps=4)
    return out


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return softplus(x)
