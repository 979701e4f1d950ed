"""A compile-time bomb with no loop: an exponential constexpr recursion (fib(90) unmemoised)
and a template recursion 800 deep."""
import torch

from opforge.cuda import load_cuda

CUDA_SRC = r"""
#include <cuda_runtime.h>
#include <cfloat>

// one thread per row: a correct softmax over the last dim
__global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* row = x + (long long)r * cols;
    float* out = y + (long long)r * cols;
    float m = -FLT_MAX;
    for (int c = 0; c < cols; ++c) m = fmaxf(m, row[c]);
    float s = 0.0f;
    for (int c = 0; c < cols; ++c) s += expf(row[c] - m);
    for (int c = 0; c < cols; ++c) out[c] = expf(row[c] - m) / s;
}

template <int N> struct Fib { static constexpr long long v = Fib<N - 1>::v + Fib<N - 2>::v; };
template <> struct Fib<1> { static constexpr long long v = 1; };
template <> struct Fib<0> { static constexpr long long v = 0; };
constexpr long long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
__device__ long long sink = fib(90) + Fib<800>::v;
extern "C" void softmax_launch(const float* x, float* y, int rows, int cols, cudaStream_t stream) {
    softmax_rows<<<(rows + 31) / 32, 32, 0, stream>>>(x, y, rows, cols);
}
"""

_lib = load_cuda(CUDA_SRC)


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        cols = x.shape[-1]
        _lib.softmax_launch(x, y, x.numel() // cols, cols)
        return y
