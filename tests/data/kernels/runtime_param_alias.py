"""Runtime cheat: writes every result into a buffer registered on the module and returns a view of
it, so the caller's tensor is the model's own memory. Nothing in the source is forbidden; the
worker's aliasing check (outputs against the model's parameters and buffers) rejects it."""
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
        self.register_buffer("scratch", torch.empty(1 << 16))

    def forward(self, x):
        x = x.contiguous()
        if x.numel() <= self.scratch.numel():
            out = self.scratch[: x.numel()].view(x.shape)
        else:
            out = torch.empty_like(x)
        _softmax_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
        return out
