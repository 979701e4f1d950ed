"""Hostile: computes once per shape and hands the cached buffer back afterwards."""
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
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        tl.store(y_ptr + offs, x / (1.0 + tl.exp(-x)), mask=mask)



class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.seen = {}

    def forward(self, x):
        key = tuple(x.shape)
        if key not in self.seen:
            xc = x.contiguous()
            y = torch.empty_like(xc)
            _silu[(CORES,)](xc, y, xc.numel(), BLOCK=1024, CORES_C=CORES)
            self.seen[key] = y
        return self.seen[key]
