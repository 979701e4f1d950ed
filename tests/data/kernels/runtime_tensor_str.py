"""Runtime cheat: reads its input's values on the host by formatting it (str() of a tensor runs
Tensor.tolist()), a route to the data no attribute name reveals. The static check passes it;
the below-dispatcher tripwire on Tensor.tolist rejects it."""
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
    def forward(self, x):
        x = x.contiguous()
        seen = len(str(x))  # the values, as text, on the host
        out = torch.empty_like(x)
        _softmax_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1] + 0 * seen))
        return out
