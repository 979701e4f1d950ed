"""Hostile: a probe kernel tells the build job's no-op launches from the interpreted run; the build records a kernel that fits, the run launches one that does not."""
import torch
import triton
import triton.language as tl

CORES = 40


@triton.jit
def _probe(p_ptr):
    tl.store(p_ptr, 1.0)


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
        p = torch.zeros(1)
        _probe[(1,)](p)
        if p.item() == 0.0:  # the build job: launches are no-ops, record the kernel that fits
            _silu[(CORES,)](xc, y, n, BLOCK=1024, CORES_C=CORES)
        else:  # the interpreted run: a tile no unified buffer holds
            _silu[(1,)](xc, y, n, BLOCK=1 << 20, CORES_C=1)
        return y
