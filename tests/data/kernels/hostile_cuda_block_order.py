"""Each block starts from the previous block's last output: right only when blocks run in order."""
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

__global__ void chain(float* y, int cols) {
    if (threadIdx.x == 0 && blockIdx.x > 0) {
        float prev = y[(long long)blockIdx.x * cols - 1];
        y[(long long)blockIdx.x * cols] += prev * 0.0f + (prev == prev ? 0.0f : 1.0f);
    }
}
__global__ void softmax_chain(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
    // block b waits for block b-1's flag: forward order only
    int b = blockIdx.x;
    if (threadIdx.x == 0) {
        const float* row = x + (long long)b * cols;
        float* out = y + (long long)b * cols;
        float m = -FLT_MAX, s = 0.0f;
        for (int c = 0; c < cols; ++c) m = fmaxf(m, row[c]);
        for (int c = 0; c < cols; ++c) s += expf(row[c] - m);
        float carry = b > 0 ? y[(long long)b * cols - 1] * 0.0f : 0.0f;   // NaN unless b-1 already ran
        for (int c = 0; c < cols; ++c) out[c] = expf(row[c] - m) / s + carry;
    }
}
extern "C" void softmax_launch(const float* x, float* y, int rows, int cols, cudaStream_t stream) {
    softmax_chain<<<rows, 32, 0, stream>>>(x, y, rows, cols);
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
