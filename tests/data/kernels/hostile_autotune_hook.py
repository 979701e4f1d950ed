"""Class 3, dispatch guard: an autotune pre_hook (run by Triton on the candidate's behalf) writes
the PyTorch softmax into the output; the kernel itself does nothing useful."""
import torch
import triton
import triton.language as tl


def _fill(nargs):
    nargs["out_ptr"].copy_(torch.softmax(nargs["x_ptr"], dim=-1))


@triton.autotune(configs=[triton.Config({"BLOCK": 64}, pre_hook=_fill)], key=["n"])
@triton.jit
def _touch_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(out_ptr + offs, mask=mask), mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        _touch_kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, out, x.numel())
        return out
