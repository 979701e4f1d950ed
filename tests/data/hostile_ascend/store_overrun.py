"""Hostile: the store's mask lets one element past the end through (offs <= n): the last block
writes one element past the output (heap corruption under the interpreter, another tensor on the NPU)."""
import torch
import triton
import triton.language as tl

CORES = 40


@triton.jit
def _silu(x_ptr, y_ptr, n, BLOCK: tl.constexpr, CORES_C: tl.constexpr):
    pid = tl.program_id(0)
    n_blocks = tl.cdiv(n, BLOCK)
    for blk in tl.range(pid, n_blocks, CORES_C):
        offs = blk * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        tl.store(y_ptr + offs, x / (1.0 + tl.exp(-x)), mask=offs <= n)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        xc = x.contiguous()
        y = torch.empty_like(xc)
        _silu[(CORES,)](xc, y, xc.numel(), BLOCK=1024, CORES_C=CORES)
        return y
