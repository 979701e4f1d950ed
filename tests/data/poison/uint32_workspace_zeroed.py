"""Correct control: the same uint32 workspace, zeroed with torch.zeros before the kernel counts
into it."""
import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(x_ptr, out_ptr, visits_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    before = tl.load(visits_ptr + row)
    tl.store(visits_ptr + row, before + 1)
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0) + before.to(tl.float32), mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        visits = torch.zeros(x.shape[0], dtype=torch.uint32, device=x.device)
        _softmax_kernel[(x.shape[0],)](x, out, visits, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
        return out
