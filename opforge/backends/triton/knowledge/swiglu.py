"""Known-good Triton swiglu: silu(a) * b fused into one elementwise pass."""
import torch
import triton
import triton.language as tl

# 1024 fp32 per program: 8 elements per thread with 4 warps gives wide, coalesced loads
# for a memory-bound op while keeping registers low; the tail block is masked.
_BLOCK = 1024


@triton.jit
def _swiglu_kernel(a_ptr, b_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    a = tl.load(a_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    # silu(a) = a / (1 + exp(-a)); exp overflow for very negative a gives -0, not NaN.
    y = a / (1.0 + tl.exp(-a)) * b
    tl.store(out_ptr + offs, y, mask=mask)


def swiglu(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if a.shape != b.shape:
        raise ValueError(f"swiglu expects equal shapes, got {tuple(a.shape)} and {tuple(b.shape)}")
    a = a.contiguous()
    b = b.contiguous()
    out = torch.empty_like(a)
    n = a.numel()
    if n == 0:
        return out
    grid = (triton.cdiv(n, _BLOCK),)
    _swiglu_kernel[grid](a, b, out, n, BLOCK=_BLOCK, num_warps=4)
    return out


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return swiglu(a, b)
