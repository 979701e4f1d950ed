"""Host compute with no subscript, no `->`, no `*` and no lambda: libc's memcpy called as
`(memcpy)(...)` (a call no name precedes), into a local that shadows a kernel's name (`&name` of a
defined function is allowed), arithmetic on the host, and a kernel launch in every loop."""
import torch

from opforge.cuda import load_cuda

CUDA_SRC = r"""
#include <cuda_runtime.h>
#include <cfloat>

__global__ void touch(float* y) { }
__global__ void v(float* y) { }
extern "C" void softmax_launch(const float* x, float* y, int rows, int cols, cudaStream_t stream) {
    for (int r = 0; r < rows; ++r) {
        const float* row = x + (long long)r * cols;
        float* out = y + (long long)r * cols;
        float v = 0.0f, m = -FLT_MAX, s = 0.0f;
        for (int c = 0; c < cols; ++c) { (memcpy)(&v, row + c, 4); m = (fmaxf)(m, v); touch<<<1, 1, 0, stream>>>(y); }
        for (int c = 0; c < cols; ++c) { (memcpy)(&v, row + c, 4); s += (expf)(v - m); touch<<<1, 1, 0, stream>>>(y); }
        for (int c = 0; c < cols; ++c) {
            (memcpy)(&v, row + c, 4);
            v = (expf)(v - m) / s;
            (memcpy)(out + c, &v, 4);
            touch<<<1, 1, 0, stream>>>(y);
        }
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
