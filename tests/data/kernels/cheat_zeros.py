"""Cheat: writes zeros everywhere (a softmax over many columns is small, so a fixed atol would pass it)."""
import torch
import triton
import triton.language as tl


@triton.jit
def _zeros_kernel(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros([BLOCK], dtype=tl.float32), mask=offs < n)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()  # the kernel indexes rows by n_cols: a strided input must be copied first
        out = torch.empty_like(x)
        _zeros_kernel[(triton.cdiv(x.numel(), 256),)](out, x.numel(), BLOCK=256)
        return out
