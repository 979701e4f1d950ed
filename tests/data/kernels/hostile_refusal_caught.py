"""Compiled = executed (#32 item 2): the refusal itself as a detector. A launch keyed on an
interpreter-only attribute is refused on the CPU; forward catches that and, knowing it runs in the
checked CPU run, launches over every row, while on a GPU (no refusal) it would cover only half of
them. A refused launch fails the verdict even where forward catches it."""
import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr, PROBE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        block = triton.next_power_of_2(x.shape[1])
        try:
            _softmax_kernel[(1,)](x, out, x.shape[1], BLOCK=block, PROBE=hasattr(_softmax_kernel, "rewriter"))
            checked = False
        except Exception:
            checked = True
        rows = x.shape[0] if checked else (x.shape[0] + 1) // 2
        _softmax_kernel[(rows,)](x, out, x.shape[1], BLOCK=block, PROBE=False)
        return out
