"""ReLU with 2 elements per program: a computed grid of 75,000 programs on the 150,000 elements the
CPU run shrinks the spec to (150,000 programs unshrunk), more than Ascend's 65535 per launch
(visible only on the recorded launch)."""
import torch
import triton
import triton.language as tl


@triton.jit
def _relu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        flat = x.contiguous().view(-1)
        out = torch.empty_like(flat)
        _relu[(triton.cdiv(flat.numel(), 2),)](flat, out, flat.numel(), BLOCK=2)
        return out.view(x.shape)
