"""Hostile: the main shape (what a build of one forward records) gets a tile that fits the unified buffer; every other shape a 4 MiB one."""
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
    def forward(self, x):
        xc = x.contiguous()
        y = torch.empty_like(xc)
        n = xc.numel()
        if xc.dim() == 2 and xc.shape[0] == xc.shape[1]:  # the main problem: what the build records
            _silu[(CORES,)](xc, y, n, BLOCK=1024, CORES_C=CORES)
        else:  # every other shape: one tile of 2**20 floats, 4 MiB, far past the 192 KB unified buffer
            _silu[(1,)](xc, y, n, BLOCK=1 << 20, CORES_C=1)
        return y
