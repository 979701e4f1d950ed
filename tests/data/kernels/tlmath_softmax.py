"""A correct softmax written with tl.math (#32 item 10): its launches must keep one identity from
the first launch to the last, on NVIDIA Triton as on Triton-Ascend."""
import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=float("-inf"))
    shifted = x - tl.max(x, axis=0)
    total = tl.sum(tl.math.exp(shifted), axis=0)
    tl.store(out_ptr + row * n_cols + cols, tl.math.exp(shifted - tl.math.log(total)), mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        _softmax_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
        return out
