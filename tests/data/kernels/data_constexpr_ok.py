"""A correct softmax whose constexpr is read from the input's values (a float64 path for large
magnitudes, chosen from a few elements read on the host): a case of the main case's layout but
other values (the scaled stress case) launches another specialisation, which the build compiles
because it records every case of the plan, not one per layout (the control for that)."""
import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr, LARGE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=float("-inf"))
    if LARGE:
        x = x.to(tl.float64)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * n_cols + cols, (e / tl.sum(e, axis=0)).to(tl.float32), mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        large = any(abs(float(v)) > 100.0 for v in x.reshape(-1)[:8])
        _softmax_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]), LARGE=large)
        return out
