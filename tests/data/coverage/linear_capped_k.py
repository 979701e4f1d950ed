"""Wrong: one K tile of 256, the K the shrunk CPU run uses, with no loop over K: the constructor's
declared in_features = 2048 is summed only in part."""
import torch
import triton
import triton.language as tl


@triton.jit
def _linear_kernel(x_ptr, w_ptr, out_ptr, K, N, BLOCK_K: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    ks = tl.arange(0, BLOCK_K)
    ns = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * K + ks, mask=ks < K, other=0.0)
    w = tl.load(w_ptr + ns[:, None] * K + ks[None, :], mask=(ns[:, None] < N) & (ks[None, :] < K), other=0.0)
    tl.store(out_ptr + row * N + ns, tl.sum(w * x[None, :], axis=1), mask=ns < N)


class ModelNew(torch.nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = torch.nn.Linear(in_features, out_features, bias=False)

    def forward(self, x):
        x, w = x.contiguous(), self.linear.weight.contiguous()
        out = torch.empty(x.shape[0], w.shape[0], device=x.device, dtype=x.dtype)
        _linear_kernel[(x.shape[0],)](x, w, out, x.shape[1], w.shape[0], BLOCK_K=256,
                                      BLOCK_N=triton.next_power_of_2(w.shape[0]))
        return out
