"""Runtime cheat for a float64 op: computes in float32 and casts back. No low-precision name
appears (float32 is no half type, so the static check passes it); the ForwardGuard's narrowing-cast
check on `_to_copy` (float64 -> float32) is what rejects it."""
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
        x32 = x.contiguous().float()  # float64 -> float32: half the bits of every input
        out = torch.empty_like(x32)
        _softmax_kernel[(x32.shape[0],)](x32, out, x32.shape[1], BLOCK=triton.next_power_of_2(x32.shape[1]))
        return out.double()
