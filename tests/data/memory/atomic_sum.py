"""Correct: each program adds its partial sum into the output atomically (float atomics: the
repeated calls may differ in the last bits, within tolerance)."""
import torch
import triton
import triton.language as tl


@triton.jit
def _sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(out_ptr, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0)))


class ModelNew(torch.nn.Module):
    def forward(self, x):
        out = torch.zeros(1, dtype=x.dtype, device=x.device)
        _sum[(triton.cdiv(x.numel(), 32),)](x, out, x.numel(), BLOCK=32)
        return out
