"""The host compute hidden in a __host__ __device__ helper that the launcher calls: the helper
subscripts tensor data on the host."""
import torch

from opforge.cuda import load_cuda

CUDA_SRC = r"""
#include <cuda_runtime.h>
#include <cfloat>

__global__ void touch(float* y) { }
__host__ __device__ void row_softmax(const float* row, float* out, int cols) {
    float m = -FLT_MAX, s = 0.0f;
    for (int c = 0; c < cols; ++c) m = fmaxf(m, row[c]);
    for (int c = 0; c < cols; ++c) s += expf(row[c] - m);
    for (int c = 0; c < cols; ++c) out[c] = expf(row[c] - m) / s;
}
extern "C" void softmax_launch(const float* x, float* y, int rows, int cols, cudaStream_t stream) {
    for (int r = 0; r < rows; ++r) {
        row_softmax(x + (long long)r * cols, y + (long long)r * cols, cols);
        touch<<<1, 1, 0, stream>>>(y);
    }
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
