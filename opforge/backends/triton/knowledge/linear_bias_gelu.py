"""Known-good Triton linear_bias_gelu: gelu(x @ W^T + b), bias and exact GELU fused into the GEMM epilogue."""
import torch
import triton
import triton.language as tl

# 64x64 output tiles with 32-deep K steps: one fp32 stage is 16 KiB of shared memory, so 3
# pipeline stages fit and 4 warps keep the tile busy. GROUP_M=8 launches tiles in groups so
# neighbouring programs reuse weight tiles from L2.
_BLOCK_M, _BLOCK_N, _BLOCK_K, _GROUP_M = 64, 64, 32, 8


@triton.jit
def _linear_bias_gelu_kernel(x_ptr, w_ptr, bias_ptr, out_ptr, M, N, K,
                             stride_xm, stride_xk, stride_wn, stride_wk, stride_om, stride_on,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                             GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    group_size = GROUP_M * num_pid_n
    first_m = (pid // group_size) * GROUP_M
    group_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group_size) % group_m
    pid_n = (pid % group_size) // group_m

    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + rm[:, None] * stride_xm + rk[None, :] * stride_xk
    # W is [N, K]; reading it through swapped strides gives the [K, N] tile of W^T without a copy.
    w_ptrs = w_ptr + rk[:, None] * stride_wk + rn[None, :] * stride_wn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(x_ptrs, mask=(rm[:, None] < M) & (rk[None, :] + k < K), other=0.0)
        b = tl.load(w_ptrs, mask=(rk[:, None] + k < K) & (rn[None, :] < N), other=0.0)
        # "ieee": true fp32 products; the reduced-mantissa tensor-core default would break the fp32 contract.
        acc = tl.dot(a, b, acc, input_precision="ieee")
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk
    # Epilogue in registers: bias, then exact GELU 0.5*v*(1 + erf(v/sqrt(2))).
    acc += tl.load(bias_ptr + rn, mask=rn < N, other=0.0)[None, :]
    out = 0.5 * acc * (1.0 + tl.erf(acc * 0.7071067811865476))
    out_ptrs = out_ptr + rm[:, None] * stride_om + rn[None, :] * stride_on
    tl.store(out_ptrs, out, mask=(rm[:, None] < M) & (rn[None, :] < N))


def linear_bias_gelu(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    N, K = weight.shape
    x2 = x.reshape(-1, K)  # any leading dims become rows
    M = x2.shape[0]
    out = torch.empty((M, N), dtype=x.dtype, device=x.device)
    if out.numel() == 0:
        return out.reshape(*x.shape[:-1], N)
    bias = bias.contiguous()
    grid = (triton.cdiv(M, _BLOCK_M) * triton.cdiv(N, _BLOCK_N),)
    _linear_bias_gelu_kernel[grid](x2, weight, bias, out, M, N, K,
                                   x2.stride(0), x2.stride(1), weight.stride(0), weight.stride(1),
                                   out.stride(0), out.stride(1),
                                   BLOCK_M=_BLOCK_M, BLOCK_N=_BLOCK_N, BLOCK_K=_BLOCK_K, GROUP_M=_GROUP_M,
                                   num_warps=4, num_stages=3)
    return out.reshape(*x.shape[:-1], N)


class ModelNew(torch.nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        # Same submodule name as the spec so the state_dicts match; only its tensors are read.
        self.linear = torch.nn.Linear(in_features, out_features)

    def forward(self, x):
        return linear_bias_gelu(x, self.linear.weight, self.linear.bias)
