import torch
import triton
import triton.language as tl

CORES = 40  # vector cores of an Ascend 910B3


@triton.jit
def _softmax_rows(x_ptr, y_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    for row in tl.range(pid, n_rows, CORES_C):
        x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
        m = tl.max(x, 0)
        e = tl.exp(x - m)
        tl.store(y_ptr + row * n_cols + cols, e / tl.sum(e, 0), mask=mask)


CORES_C = tl.constexpr(CORES)


class ModelNew(torch.nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        y = torch.empty_like(x2)
        block = triton.next_power_of_2(x2.shape[1])
        grid = (min(CORES, x2.shape[0]),)
        _softmax_rows[grid](x2, y, x2.shape[0], x2.shape[1], BLOCK=block)
        return y.view(x.shape)
