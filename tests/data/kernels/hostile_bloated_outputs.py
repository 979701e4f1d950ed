"""The outputs file as a way to tax the judge: a correct softmax that also returns 256 KiB of
junk with every call, so the file the judge's process would read is megabytes over what a
correct candidate writes (and with a larger junk tensor, gigabytes). The sandbox reads
`outputs.pt` only within Material.output_cap, and the verdict says why it was refused."""
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
        out = torch.empty_like(x)
        _softmax_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
        return out, torch.empty(1 << 16, dtype=torch.float32)
