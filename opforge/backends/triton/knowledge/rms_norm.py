"""Known-good Triton rms_norm: x * rsqrt(mean(x^2) + eps) * weight over the last dim."""
import torch
import triton
import triton.language as tl


@triton.jit
def _rms_norm_kernel(x_ptr, w_ptr, out_ptr, n_cols, stride_x, stride_out, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    out_row = out_ptr + row * stride_out
    cols = tl.arange(0, BLOCK)

    # Pass 1: mean of squares in fp32.
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        c = start + cols
        x = tl.load(x_row + c, mask=c < n_cols, other=0.0)
        acc += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)

    # Pass 2: scale; same order as the reference, (x * rstd) * w.
    for start in range(0, n_cols, BLOCK):
        c = start + cols
        mask = c < n_cols
        x = tl.load(x_row + c, mask=mask, other=0.0)
        w = tl.load(w_ptr + c, mask=mask, other=0.0)
        tl.store(out_row + c, x * rstd * w, mask=mask)


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


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    x2 = _as_rows(x)
    n_rows, n_cols = x2.shape
    weight = weight.contiguous()
    out = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    if out.numel() == 0:
        return out.reshape(x.shape)
    block, warps = _row_config(n_cols)
    _rms_norm_kernel[(n_rows,)](x2, weight, out, n_cols, x2.stride(0), out.stride(0), eps,
                                BLOCK=block, num_warps=warps)
    return out.reshape(x.shape)


class ModelNew(torch.nn.Module):
    def __init__(self, hidden):
        super().__init__()
        # Same parameter name and shape as the spec so its state_dict loads here.
        self.weight = torch.nn.Parameter(torch.randn(hidden))
        self.eps = 1e-6

    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
