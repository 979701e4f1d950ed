"""Known-good CUDA add_mul_relu: relu(x * y + bias) in one pass over a flat dense buffer, the bias
a row broadcast over the last dim (read in place, period = its length) or a full-shape tensor."""
import torch

from opforge.cuda import load_cuda

CUDA_SRC = r"""
#include <cuda_runtime.h>
#include <cstdint>

__global__ void __launch_bounds__(256) add_mul_relu_kernel(const float* __restrict__ x,
                                                           const float* __restrict__ y,
                                                           const float* __restrict__ bias,
                                                           float* __restrict__ out, int64_t n,
                                                           int64_t period) {
    // int64 indices: n may pass 2**31. The grid is capped, so each thread strides over the buffer;
    // consecutive threads touch consecutive elements of x, y and out (coalesced).
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        // A bias row repeats every `period` elements of the flat output: it stays in cache, so it
        // is read in place instead of being expanded to the full shape. A full-shape bias has
        // period n (no modulo needed).
        const float b = bias[period == n ? i : i % period];
        const float v = x[i] * y[i] + b;
        out[i] = v < 0.f ? 0.f : v;  // relu that keeps NaN, like torch.relu (fmaxf(v, 0) drops it)
    }
}

extern "C" void add_mul_relu_launch(const float* x, const float* y, const float* bias, float* out,
                                    int64_t n, int64_t period, cudaStream_t stream) {
    if (n <= 0 || period <= 0) return;  // an empty grid is a launch error
    // 256 threads x 4 elements per block; at most 1024 blocks (about 8 per SM of an H100/H200),
    // enough to fill the GPU: the grid-stride loop covers the rest.
    const int threads = 256;
    int64_t blocks = (n + 4 * threads - 1) / (4 * threads);
    if (blocks > 1024) blocks = 1024;
    add_mul_relu_kernel<<<(unsigned)blocks, threads, 0, stream>>>(x, y, bias, out, n, period);
}
"""
_lib = load_cuda(CUDA_SRC)


def _bias_layout(bias: torch.Tensor, shape: torch.Size) -> tuple[torch.Tensor, int]:
    """The bias as a dense buffer and the period it repeats with in the flat output."""
    last = shape[-1] if len(shape) > 0 else 1
    if bias.numel() == 1:
        return bias.reshape(1), 1
    if bias.dim() >= 1 and bias.shape[-1] == last and bias.numel() == last:
        return bias.reshape(last).contiguous(), last  # a row broadcast over leading dims
    bias = bias.expand(shape).contiguous()  # a general broadcast: materialise the layout
    return bias, bias.numel()


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y, bias):
        shape = torch.broadcast_shapes(x.shape, y.shape, bias.shape)
        x = x.expand(shape).contiguous()  # no copy when already full-shape and dense
        y = y.expand(shape).contiguous()
        bias, period = _bias_layout(bias, shape)
        out = torch.empty(shape, dtype=x.dtype, device=x.device)
        _lib.add_mul_relu_launch(x, y, bias, out, out.numel(), period)
        return out
