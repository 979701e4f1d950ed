"""Computes in fp64 on Atlas A2/A3, which have no fp64 (Triton-Ascend docs: fp64 unsupported for
every op, a hardware limitation): loads fp32, widens to fp64, computes and narrows back. Correct
on the interpreter; triton-adapter-opt and bishengir-compile let the extf/mulf/truncf through."""
import torch
import triton
import triton.language as tl

TILE = 1024


@triton.jit
def _affine(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float64)
    tl.store(y_ptr + offs, (x * 2.0 + 1.0).to(tl.float32), mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        _affine[(triton.cdiv(x.numel(), TILE),)](x, y, x.numel(), BLOCK=TILE)
        return y
