"""Known-good Triton cross_entropy: mean cross-entropy of logits [N, C] against int64 targets [N]."""
import torch
import triton
import triton.language as tl

_IGNORE_INDEX = -100  # torch.nn.functional.cross_entropy default: such rows add no loss and no count


@triton.jit
def _cross_entropy_row_kernel(logits_ptr, targets_ptr, loss_ptr, valid_ptr, n_cols, stride_row,
                              ignore_index, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = logits_ptr + row * stride_row
    cols = tl.arange(0, BLOCK)
    # Online logsumexp over column blocks (max-subtracted so exp cannot overflow).
    m = tl.full([], float("-inf"), dtype=tl.float32)
    s = tl.zeros([], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        c = start + cols
        x = tl.load(x_row + c, mask=c < n_cols, other=float("-inf"))
        m_new = tl.maximum(m, tl.max(x, axis=0))
        alpha = tl.where(m == m_new, 1.0, tl.exp(m - m_new))
        m_sub = tl.where(m_new == float("-inf"), 0.0, m_new)
        s = s * alpha + tl.sum(tl.exp(x - m_sub), axis=0)
        m = m_new
    target = tl.load(targets_ptr + row)
    valid = target != ignore_index
    x_t = tl.load(x_row + tl.where(valid, target, 0))
    loss = m + tl.log(s) - x_t  # -log_softmax(x)[target]
    tl.store(loss_ptr + row, tl.where(valid, loss, 0.0))
    tl.store(valid_ptr + row, tl.where(valid, 1.0, 0.0))


@triton.jit
def _mean_kernel(loss_ptr, valid_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # One program: N per-row losses is small next to N*C logits, so a serial block loop is cheap
    # and gives a deterministic sum (no atomics).
    offs = tl.arange(0, BLOCK)
    total = tl.zeros([BLOCK], dtype=tl.float32)
    count = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        o = start + offs
        mask = o < n
        total += tl.load(loss_ptr + o, mask=mask, other=0.0)
        count += tl.load(valid_ptr + o, mask=mask, other=0.0)
    tl.store(out_ptr, tl.sum(total, axis=0) / tl.sum(count, axis=0))


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


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    x2 = _as_rows(logits)
    n_rows, n_cols = x2.shape
    targets = targets.reshape(-1).contiguous()
    losses = torch.empty(n_rows, dtype=torch.float32, device=logits.device)
    valid = torch.empty(n_rows, dtype=torch.float32, device=logits.device)
    out = torch.empty((), dtype=logits.dtype, device=logits.device)
    if n_rows > 0:
        block, warps = _row_config(n_cols)
        _cross_entropy_row_kernel[(n_rows,)](x2, targets, losses, valid, n_cols, x2.stride(0), _IGNORE_INDEX,
                                             BLOCK=block, num_warps=warps)
    # 1024 per step: a few iterations even for tens of thousands of rows.
    _mean_kernel[(1,)](losses, valid, out, n_rows, BLOCK=1024, num_warps=4)
    return out


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, targets):
        return cross_entropy(logits, targets)
