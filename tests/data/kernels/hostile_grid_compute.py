"""Class 3, dispatch guard: the softmax is computed with PyTorch inside the callable grid, which
Triton calls during the launch (the old guard was suspended for the whole launch). The kernel
itself only copies; with every launch a no-op the grid is never called, so the output is garbage."""
import torch
import triton
import triton.language as tl


@triton.jit
def _copy_kernel(src_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        done = torch.empty_like(x)

        def grid(meta):
            done.copy_(torch.softmax(x, dim=-1))
            return (triton.cdiv(x.numel(), meta["BLOCK"]),)

        _copy_kernel[grid](done, out, x.numel(), BLOCK=1024)
        return out
