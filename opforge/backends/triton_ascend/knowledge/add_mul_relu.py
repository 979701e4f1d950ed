"""Known-good Triton-Ascend add_mul_relu: relu(x * y + bias), bias a row broadcast over the last dim
(or a tensor of x's shape). The work is [SUB_M, BLOCK_N] tiles of the rows x columns view; the
grid is the vector core count and each program loops over tiles. The bias is read through a row
stride (0 for a broadcast row): affine offsets the adapter lowers to strided copies, where
`offs % n_cols` would be a gather."""
import torch
import triton
import triton.language as tl

NUM_CORES = 40  # vector cores of an Ascend 910B3
# 4096 fp32 = 16 KB a tile; x, y, bias and the result are live together, doubled by
# multi-buffering about 130 KB of the 192 KB unified buffer.
TILE = 4096


@triton.jit
def _add_mul_relu_kernel(x_ptr, y_ptr, b_ptr, out_ptr, n_rows, n_cols, stride_b,
                         SUB_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    step = tl.num_programs(0)
    n_col_blocks = tl.cdiv(n_cols, BLOCK_N)
    n_tiles = tl.cdiv(n_rows, SUB_M) * n_col_blocks
    for tile in tl.range(pid, n_tiles, step):
        rows = (tile // n_col_blocks) * SUB_M + tl.arange(0, SUB_M)
        cols = (tile % n_col_blocks) * BLOCK_N + tl.arange(0, BLOCK_N)
        mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
        offs = tl.cast(rows, tl.int64)[:, None] * n_cols + cols[None, :]
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        y = tl.load(y_ptr + offs, mask=mask, other=0.0)
        b = tl.load(b_ptr + tl.cast(rows, tl.int64)[:, None] * stride_b + cols[None, :], mask=mask, other=0.0)
        tl.store(out_ptr + offs, tl.maximum(x * y + b, 0.0), mask=mask)


def add_mul_relu(x: torch.Tensor, y: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    shape = torch.broadcast_shapes(x.shape, y.shape, bias.shape)
    n_cols = shape[-1] if len(shape) else 1
    x2 = x.expand(shape).contiguous().reshape(-1, n_cols)
    y2 = y.expand(shape).contiguous().reshape(-1, n_cols)
    # A bias over the last dim only is read with row stride 0; any other broadcast is materialised.
    row_bias = bias.dim() <= 1
    b2 = bias.reshape(-1).expand(n_cols).contiguous() if row_bias else bias.expand(shape).contiguous()
    out = torch.empty(x2.shape, dtype=x.dtype, device=x.device)
    n_rows = x2.shape[0]
    if out.numel() == 0:
        return out.reshape(shape)
    block_n = max(8, min(triton.next_power_of_2(n_cols), TILE))  # 8 fp32: one 32-byte block
    sub_m = min(TILE // block_n, triton.next_power_of_2(n_rows))
    tiles = triton.cdiv(n_rows, sub_m) * triton.cdiv(n_cols, block_n)
    _add_mul_relu_kernel[(min(NUM_CORES, tiles),)](x2, y2, b2, out, n_rows, n_cols, 0 if row_bias else n_cols,
                                                   SUB_M=sub_m, BLOCK_N=block_n)
    return out.reshape(shape)


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y, bias):
        return add_mul_relu(x, y, bias)
