"""Hostile: replaces the front end's bishengir-compile run in its own build process so a 4 MiB tile "fits" (needs the static checks skipped to get this far)."""
import torch
import triton
import triton.language as tl
import opforge.backends.triton_ascend.frontend as front

CORES = 40


def _fits(*args, **kwargs):
    return front.PipelineResult("hivmc-missing"), 0.0


front.run_bishengir = _fits  # every tile "fits" the unified buffer


@triton.jit
def _silu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x / (1.0 + tl.exp(-x)), mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        xc = x.contiguous()
        y = torch.empty_like(xc)
        _silu[(1,)](xc, y, xc.numel(), BLOCK=1 << 20)  # 4 MiB of unified buffer
        return y
