"""Wrong: the projection right, then the tanh approximation of GELU passed off as the exact one."""
import torch
import triton
import triton.language as tl


@triton.jit
def _gelu_projection_kernel(x_ptr, w_ptr, out_ptr, K, N, BLOCK_K: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    ks = tl.arange(0, BLOCK_K)
    ns = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * K + ks, mask=ks < K, other=0.0)
    w = tl.load(w_ptr + ks[:, None] * N + ns[None, :], mask=(ks[:, None] < K) & (ns[None, :] < N), other=0.0)
    h = tl.sum(x[:, None] * w, axis=0)
    tl.store(out_ptr + row * N + ns, _gelu(h), mask=ns < N)


@triton.jit
def _gelu(h):
    inner = 0.7978845608028654 * (h + 0.044715 * h * h * h)
    return 0.5 * h * (1.0 + (2.0 / (1.0 + tl.exp(-2.0 * inner)) - 1.0))


class ModelNew(torch.nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(in_features, out_features))

    def forward(self, x):
        x, w = x.contiguous(), self.weight.contiguous()
        out = torch.empty(x.shape[0], w.shape[1], device=x.device, dtype=x.dtype)
        _gelu_projection_kernel[(x.shape[0],)](x, w, out, x.shape[1], w.shape[1],
                                               BLOCK_K=triton.next_power_of_2(x.shape[1]),
                                               BLOCK_N=triton.next_power_of_2(w.shape[1]))
        return out
