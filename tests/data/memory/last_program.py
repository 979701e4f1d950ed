"""Wrong: programs store partial sums and the program with the last id adds them up, as if it ran last."""
import torch
import triton
import triton.language as tl


@triton.jit
def _sum(x_ptr, part_ptr, out_ptr, n, BLOCK: tl.constexpr, MAX_PARTS: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(part_ptr + pid, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0)))
    parts = tl.num_programs(0)
    if pid == parts - 1:
        r = tl.arange(0, MAX_PARTS)
        tl.store(out_ptr, tl.sum(tl.load(part_ptr + r, mask=r < parts, other=0.0)))


class ModelNew(torch.nn.Module):
    def forward(self, x):
        grid = triton.cdiv(x.numel(), 32)
        part = torch.empty(grid, dtype=x.dtype, device=x.device)
        out = torch.empty(1, dtype=x.dtype, device=x.device)
        _sum[(grid,)](x, part, out, x.numel(), BLOCK=32, MAX_PARTS=1024)
        return out
