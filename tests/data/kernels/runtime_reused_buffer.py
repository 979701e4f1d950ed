"""Runtime cheat: one output buffer per shape, recomputed and handed out again on every call, so an
earlier caller's result changes under it. Each call's values are right (no replay of an old result
for the judge's history to see), and the buffer is zeroed before each launch, so the no-op probe
sees zeros, not the last result. Only the worker's same-buffer check across calls rejects it."""
import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.buffers_by_shape = {}

    def forward(self, x):
        x = x.contiguous()
        key = tuple(x.shape)
        if key not in self.buffers_by_shape:
            self.buffers_by_shape[key] = torch.empty_like(x)
        out = self.buffers_by_shape[key]
        out.zero_()
        _softmax_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
        return out
