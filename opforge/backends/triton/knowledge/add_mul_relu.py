"""Known-good Triton add_mul_relu: relu(x * y + bias) in one pass, bias broadcast as a row."""
import torch
import triton
import triton.language as tl

# 1024 fp32 per program: 8 elements per thread with 4 warps gives wide, coalesced loads
# for a memory-bound op while keeping registers low; the tail block is masked.
_BLOCK = 1024


@triton.jit
def _add_mul_relu_kernel(x_ptr, y_ptr, bias_ptr, out_ptr, n_elements, bias_period, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    # A bias row repeats every `bias_period` elements of the flat output, so it is read
    # in place (it stays in cache) instead of being expanded to the full shape.
    b = tl.load(bias_ptr + offs % bias_period, mask=mask, other=0.0)
    v = x * y + b
    out = tl.where(v < 0.0, 0.0, v)  # relu that keeps NaN, like torch.relu
    tl.store(out_ptr + offs, out, mask=mask)


def add_mul_relu(x: torch.Tensor, y: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    shape = torch.broadcast_shapes(x.shape, y.shape, bias.shape)
    x = x.expand(shape).contiguous()  # no copy when already full-shape and dense
    y = y.expand(shape).contiguous()
    last = shape[-1] if len(shape) > 0 else 1
    if bias.numel() == 1:
        bias, period = bias.reshape(1), 1
    elif bias.dim() >= 1 and bias.shape[-1] == last and bias.numel() == last:
        bias, period = bias.reshape(last).contiguous(), last  # a row broadcast over leading dims
    else:
        bias = bias.expand(shape).contiguous()  # general broadcast: materialise the layout
        period = bias.numel()
    out = torch.empty(shape, dtype=x.dtype, device=x.device)
    n = out.numel()
    if n == 0:
        return out
    grid = (triton.cdiv(n, _BLOCK),)
    _add_mul_relu_kernel[grid](x, y, bias, out, n, period, BLOCK=_BLOCK, num_warps=4)
    return out


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y, bias):
        return add_mul_relu(x, y, bias)
