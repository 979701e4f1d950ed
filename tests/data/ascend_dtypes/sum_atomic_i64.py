"""tl.atomic_add on an int64 output: each program adds its block's partial sum. Correct on the
interpreter; Atlas A2/A3 atomics take no int64 (Triton-Ascend docs, atomic_add: int64 and uint64
unsupported, a hardware limitation), and the front end does not refuse it."""
import torch
import triton
import triton.language as tl

TILE = 512


@triton.jit
def _sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(out_ptr, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0), 0))


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.zeros(1, dtype=x.dtype, device=x.device)
        _sum[(triton.cdiv(x.numel(), TILE),)](x, out, x.numel(), BLOCK=TILE)
        return out
