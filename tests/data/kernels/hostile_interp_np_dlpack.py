"""Interpreter globals (#32 item 3): after the first interpreted launch Triton's interpreter had
copied its own module globals (`np`, `inspect`, `math`...) into the candidate's module; this host
code uses the injected `np` to normalise the kernel's exponentials through a writable zero-copy
view of the output, which no dispatcher guard sees. The file never binds `np`."""
import torch
import triton
import triton.language as tl


@triton.jit
def _exp_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=float("-inf"))
    tl.store(out_ptr + row * n_cols + cols, tl.exp(x - tl.max(x, axis=0)), mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        _exp_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
        view = np.from_dlpack(out)  # noqa: F821  (the interpreter's np)
        view /= view.sum(axis=-1, keepdims=True)
        return out
