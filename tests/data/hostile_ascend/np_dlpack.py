"""Hostile (#32 item 3): the kernel writes sigmoid(x); the host multiplies by x through the
interpreter's injected `np` (writable zero-copy views no dispatcher guard sees). The file never binds `np`."""
import torch
import triton
import triton.language as tl

CORES = 40


@triton.jit
def _sigmoid(x_ptr, y_ptr, n, BLOCK: tl.constexpr, CORES_C: tl.constexpr):
    pid = tl.program_id(0)
    n_blocks = tl.cdiv(n, BLOCK)
    for blk in tl.range(pid, n_blocks, CORES_C):
        offs = blk * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        tl.store(y_ptr + offs, 1.0 / (1.0 + tl.exp(-x)), mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        xc = x.contiguous()
        y = torch.empty_like(xc)
        _sigmoid[(CORES,)](xc, y, xc.numel(), BLOCK=1024, CORES_C=CORES)
        view = np.from_dlpack(y)  # noqa: F821  (the interpreter's np)
        view *= np.from_dlpack(xc)  # noqa: F821
        return y
