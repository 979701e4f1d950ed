"""Host subscripts hidden behind a macro: the reader must expand it as the compiler does."""
import torch

from opforge.cuda import load_cuda

CUDA_SRC = r"""
#include <cuda_runtime.h>
#include <cfloat>

#define AT(p, i) p[i]
#define LOOP for
__global__ void touch(float* y) { }
extern "C" void softmax_launch(const float* x, float* y, int rows, int cols, cudaStream_t stream) {
    LOOP (int i = 0; i < rows * cols; ++i) { AT(y, i) = AT(x, i); touch<<<1, 1, 0, stream>>>(y); }
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
