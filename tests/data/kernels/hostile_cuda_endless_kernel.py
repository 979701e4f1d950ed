"""A kernel that never ends: the per-launch limit must stop it."""
import torch

from opforge.cuda import load_cuda

CUDA_SRC = r"""
#include <cuda_runtime.h>
#include <cfloat>

__global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
    volatile int spin = 1;
    while (spin) { }
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
