"""Correct control: the same Linear, looping over K in tiles of 256."""
import torch
import triton
import triton.language as tl


@triton.jit
def _linear_kernel(x_ptr, w_ptr, out_ptr, K, N, BLOCK_K: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    ns = tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        x = tl.load(x_ptr + row * K + ks, mask=ks < K, other=0.0)
        w = tl.load(w_ptr + ns[:, None] * K + ks[None, :], mask=(ns[:, None] < N) & (ks[None, :] < K), other=0.0)
        acc += tl.sum(w * x[None, :], axis=1)
    tl.store(out_ptr + row * N + ns, acc, mask=ns < N)


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
