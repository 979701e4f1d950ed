"""__syncthreads inside a branch half the block takes, the other half at a second barrier:
undefined in CUDA (the barriers are different call sites)."""
import torch

from opforge.cuda import load_cuda

CUDA_SRC = r"""
#include <cuda_runtime.h>
#include <cfloat>

__global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, int cols) {
    __shared__ float stats[2];
    const float* row = x + (long long)blockIdx.x * cols;
    float* out = y + (long long)blockIdx.x * cols;
    if (threadIdx.x == 0) {
        float m = -FLT_MAX, s = 0.0f;
        for (int c = 0; c < cols; ++c) m = fmaxf(m, row[c]);
        for (int c = 0; c < cols; ++c) s += expf(row[c] - m);
        stats[0] = m; stats[1] = s;
        __syncthreads();
    } else {
        __syncthreads();
    }
    for (int c = threadIdx.x; c < cols; c += blockDim.x) out[c] = expf(row[c] - stats[0]) / stats[1];
}
extern "C" void softmax_launch(const float* x, float* y, int rows, int cols, cudaStream_t stream) {
    softmax_rows<<<rows, 64, 0, stream>>>(x, y, cols);
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
