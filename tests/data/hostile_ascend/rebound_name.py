"""Hostile: replaces tl.static_range, one of the names the 3.2 interpreter rebinds at every launch
(exempt from the run's snapshot, snapshot.REBOUND_EACH_LAUNCH), so the build's code generator would
unroll the candidate's own loop (needs the static checks skipped to get this far)."""
import torch
import triton
import triton.language as tl

CORES = 40
_real_static_range = tl.static_range


def _skip_odd(*args):  # would make the build compile a loop over half the blocks
    return _real_static_range(*args)


tl.static_range = _skip_odd


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
        _silu[(CORES,)](xc, y, xc.numel(), BLOCK=1024, CORES_C=CORES)
        return y
