"""Known-good Triton-Ascend layer_norm (torch.nn.LayerNorm over the last dim, weight and bias). One
program per vector core loops over rows; each row takes three passes over its sub-blocks: mean,
variance of (x - mean) (two-pass, as stable as the reference), then the affine write."""
import torch
import triton
import triton.language as tl

NUM_CORES = 40  # vector cores of an Ascend 910B3: programs beyond this run in waves
# 4096 fp32 = 16 KB a tile: x, weight, bias and an fp32 accumulator live together in the last pass;
# doubled by multi-buffering that is well inside the 192 KB unified buffer.
MAX_BLOCK = 4096


@triton.jit
def _layer_norm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, n_rows, n_cols, stride_x, stride_out, eps,
                       BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    step = tl.num_programs(0)
    cols = tl.arange(0, BLOCK)
    for row in tl.range(pid, n_rows, step):
        x_row = x_ptr + tl.cast(row, tl.int64) * stride_x
        out_row = out_ptr + tl.cast(row, tl.int64) * stride_out
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, n_cols, BLOCK):
            c = start + cols
            acc += tl.load(x_row + c, mask=c < n_cols, other=0.0).to(tl.float32)
        mean = tl.sum(acc, axis=0) / n_cols
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, n_cols, BLOCK):
            c = start + cols
            mask = c < n_cols
            x = tl.load(x_row + c, mask=mask, other=0.0).to(tl.float32)
            d = tl.where(mask, x - mean, 0.0)  # masked lanes must not add mean^2
            acc += d * d
        rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
        for start in range(0, n_cols, BLOCK):
            c = start + cols
            mask = c < n_cols
            x = tl.load(x_row + c, mask=mask, other=0.0).to(tl.float32)
            w = tl.load(w_ptr + c, mask=mask, other=0.0).to(tl.float32)
            b = tl.load(b_ptr + c, mask=mask, other=0.0).to(tl.float32)
            tl.store(out_row + c, (x - mean) * rstd * w + b, mask=mask)


def _as_rows(x: torch.Tensor) -> torch.Tensor:
    """View any leading dims as rows of the last dim, with unit column stride."""
    x2 = x.reshape(-1, x.shape[-1]) if x.dim() > 0 else x.reshape(1, 1)
    return x2 if x2.stride(-1) == 1 else x2.contiguous()


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float) -> torch.Tensor:
    x2 = _as_rows(x)
    n_rows, n_cols = x2.shape
    out = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    if out.numel() == 0:
        return out.reshape(x.shape)
    block = max(8, min(triton.next_power_of_2(n_cols), MAX_BLOCK))  # 8 fp32: one 32-byte block
    _layer_norm_kernel[(min(NUM_CORES, n_rows),)](x2, weight.contiguous(), bias.contiguous(), out, n_rows, n_cols,
                                                 x2.stride(0), out.stride(0), eps, BLOCK=block)
    return out.reshape(x.shape)


class ModelNew(torch.nn.Module):
    def __init__(self, hidden):
        super().__init__()
        # The spec's module under the spec's name, so its state_dict (norm.weight, norm.bias) loads.
        self.norm = torch.nn.LayerNorm(hidden, eps=1e-5)

    def forward(self, x):
        return layer_norm(x, self.norm.weight, self.norm.bias, self.norm.eps)
