"""Known-good Triton cumsum: inclusive prefix sum along the last dim."""
import torch
import triton
import triton.language as tl


@triton.jit
def _cumsum_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    out_row = out_ptr + row * stride_out
    cols = tl.arange(0, BLOCK)
    # Scan each column block in registers and add the running total of the blocks before it.
    # Accumulate in fp64 (an upcast; the output is fp32): a prefix sum that returns near zero after
    # thousands of terms keeps the absolute rounding error of its largest partial sums, which in
    # fp32 reaches ~1e-4 by 4096 columns. PyTorch's CPU cumsum also accumulates fp32 in double. The
    # op is memory-bound, so the wider adds cost little.
    carry = tl.zeros([], dtype=tl.float64)
    for start in range(0, n_cols, BLOCK):
        c = start + cols
        mask = c < n_cols
        x = tl.load(x_row + c, mask=mask, other=0.0).to(tl.float64)  # zero pads leave the prefix unchanged
        y = tl.cumsum(x, axis=0) + carry
        tl.store(out_row + c, y.to(out_ptr.dtype.element_ty), mask=mask)
        carry += tl.sum(x, axis=0)


# One program per row. Rows up to 4096 wide fit one tile; longer rows (16384, 32000) loop over
# 4096-wide column blocks so registers stay bounded. 16 is the smallest tile (GPU layouts need a
# power of two), and warps grow with the tile: about 512 fp32 per warp, at most 8.
def _row_config(n_cols: int):
    block = max(16, min(triton.next_power_of_2(n_cols), 4096))
    return block, max(1, min(block // 512, 8))


def _as_rows(x: torch.Tensor) -> torch.Tensor:
    """View any leading dims as rows of the last dim, with unit column stride."""
    x2 = x.reshape(-1, x.shape[-1]) if x.dim() > 0 else x.reshape(1, 1)
    return x2 if x2.stride(-1) == 1 else x2.contiguous()


def cumsum(x: torch.Tensor) -> torch.Tensor:
    x2 = _as_rows(x)
    n_rows, n_cols = x2.shape
    out = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    if out.numel() == 0:
        return out.reshape(x.shape)
    block, warps = _row_config(n_cols)
    _cumsum_kernel[(n_rows,)](x2, out, n_cols, x2.stride(0), out.stride(0), BLOCK=block, num_warps=warps)
    return out.reshape(x.shape)


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return cumsum(x)
