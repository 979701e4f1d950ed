"""Known-good CUDA softmax: softmax over the last dim, one block per row (online max/normaliser
per thread, merged across the block with warp shuffles, then one write pass)."""
import torch

from opforge.cuda import load_cuda

CUDA_SRC = r"""
#include <cuda_runtime.h>
#include <cmath>

#define FULL_MASK 0xffffffffu

// Merge a (max, sum of exp(x - max)) pair into another. Symmetric in its two pairs, so both
// lanes of a butterfly step compute bitwise the same result. Two empty pairs stay (-inf, 0):
// never (-inf) - (-inf) = NaN.
__device__ __forceinline__ void merge(float& m, float& s, float m2, float s2) {
    float mn = fmaxf(m, m2);
    if (mn == -INFINITY) return;
    s = s * expf(m - mn) + s2 * expf(m2 - mn);
    m = mn;
}

// Butterfly (xor) reduction: every lane ends with the warp's pair. The full mask is right only
// because all 32 lanes of every warp reach this call (blockDim.x is a multiple of 32 and no
// thread returns early).
__device__ __forceinline__ void warp_merge(float& m, float& s) {
    #pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        float m2 = __shfl_xor_sync(FULL_MASK, m, offset);
        float s2 = __shfl_xor_sync(FULL_MASK, s, offset);
        merge(m, s, m2, s2);
    }
}

__global__ void __launch_bounds__(256) softmax_kernel(const float* __restrict__ x,
                                                      float* __restrict__ y, int cols) {
    __shared__ float part_m[32], part_s[32];
    const int64_t base = (int64_t)blockIdx.x * cols;   // int64: rows * cols may pass 2**31
    const float* xr = x + base;
    float* yr = y + base;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;

    // Pass 1: each thread folds a strided slice of the row (consecutive threads read consecutive
    // addresses: coalesced), one expf per element; fp32 throughout.
    float m = -INFINITY, s = 0.f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float v = xr[c];
        if (v > m) { s = s * expf(m - v) + 1.f; m = v; }
        else if (v != -INFINITY) s += expf(v - m);
    }
    warp_merge(m, s);
    if (lane == 0) { part_m[warp] = m; part_s[warp] = s; }
    __syncthreads();                       // every warp's partial is written before any is read
    m = lane < warps ? part_m[lane] : -INFINITY;
    s = lane < warps ? part_s[lane] : 0.f;
    warp_merge(m, s);                      // each warp reduces the partials: all threads hold the row's pair

    // Pass 2: normalise and write (the same coalesced pattern).
    const float inv = 1.f / s;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        yr[c] = expf(xr[c] - m) * inv;
}

// Threads per row: one warp up to 1024 columns, doubling while each thread would get more than 16
// elements, at most 256 (8 warps). Always a multiple of 32, as the full-mask shuffles need. Many
// elements per thread keep the loads in flight on the GPU and cost the CPU emulator 4x less than
// 4 per thread (it runs every CUDA thread: 0.22 s instead of 0.85 s for a 512 x 512 softmax).
// A conditional, not a loop: opforge's static check allows no loops in host code.
static int row_threads(int cols) {
    return cols > 4096 ? 256 : cols > 2048 ? 128 : cols > 1024 ? 64 : 32;
}

extern "C" void softmax_launch(const float* x, float* y, int rows, int cols, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;  // an empty grid is a launch error
    softmax_kernel<<<rows, row_threads(cols), 0, stream>>>(x, y, cols);
}
"""
_lib = load_cuda(CUDA_SRC)


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()  # the kernel walks dense rows of the last dim
        y = torch.empty_like(x)
        cols = x.shape[-1] if x.dim() > 0 else 1
        rows = x.numel() // cols if cols > 0 else 0
        _lib.softmax_launch(x, y, rows, cols)
        return y
