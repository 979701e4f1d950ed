"""A 4 MiB static __shared__ array: more than a block has (ptxas refuses it), fewer elements than
the static check's limit on array sizes."""
import torch

from opforge.cuda import load_cuda

CUDA_SRC = r"""
#include <cuda_runtime.h>
#include <cfloat>

__global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
    __shared__ float big[1 << 20];
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    big[threadIdx.x] = 0.0f;
    if (r >= rows) return;
    const float* row = x + (long long)r * cols;
    float* out = y + (long long)r * cols;
    float m = -FLT_MAX;
    for (int c = 0; c < cols; ++c) m = fmaxf(m, row[c]);
    float s = 0.0f;
    for (int c = 0; c < cols; ++c) s += expf(row[c] - m);
    for (int c = 0; c < cols; ++c) out[c] = expf(row[c] - m) / s + big[threadIdx.x];
}
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
