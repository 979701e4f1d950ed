"""Hostile: an unmasked load reads past the end of x; the interpreter reads host memory and the masked store hides it."""
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
        x = tl.load(x_ptr + offs)  # no mask: the last block reads past the end of x
        tl.store(y_ptr + offs, x / (1.0 + tl.exp(-x)), mask=offs < n)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        xc = x.contiguous()
        y = torch.empty_like(xc)
        _silu[(CORES,)](xc, y, xc.numel(), BLOCK=1024, CORES_C=CORES)
        return y
