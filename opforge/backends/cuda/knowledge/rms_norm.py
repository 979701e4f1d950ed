"""Known-good CUDA rms_norm: x * rsqrt(mean(x^2) + eps) * weight over the last dim, one block per
row (fp32 sum of squares in registers, a warp-shuffle + shared-memory block sum, then one pass
that scales and writes)."""
import torch

from opforge.cuda import load_cuda

CUDA_SRC = r"""
#include <cuda_runtime.h>
#include <cmath>

#define FULL_MASK 0xffffffffu

// Butterfly (xor) sum: every lane ends with the warp's total. The full mask is right only
// because all 32 lanes of every warp reach this call (blockDim.x is a multiple of 32 and no
// thread returns before it).
__device__ __forceinline__ float warp_sum(float v) {
    #pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_xor_sync(FULL_MASK, v, offset);
    return v;
}

// The block's total in every thread: each warp sums, lane 0 parks it in shared memory, and after
// the barrier every warp sums the (at most 32) partials itself. Every thread must call it.
__device__ __forceinline__ float block_sum(float v) {
    __shared__ float partial[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    v = warp_sum(v);
    if (lane == 0) partial[warp] = v;
    __syncthreads();                       // every warp's partial is written before any is read
    return warp_sum(lane < warps ? partial[lane] : 0.f);
}

__global__ void __launch_bounds__(256) rms_norm_kernel(const float* __restrict__ x,
                                                       const float* __restrict__ w,
                                                       float* __restrict__ y, int cols, float eps) {
    const int64_t base = (int64_t)blockIdx.x * cols;   // int64: rows * cols may pass 2**31
    const float* xr = x + base;
    float* yr = y + base;

    // Pass 1: sum of squares in fp32, strided so consecutive threads read consecutive addresses.
    float ss = 0.f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float v = xr[c];
        ss += v * v;
    }
    // eps inside the root: an all-zero row gives 0 * rsqrt(eps) = 0, not 0 * inf = NaN.
    const float rstd = rsqrtf(block_sum(ss) / (float)cols + eps);

    // Pass 2: same order as the reference, (x * rstd) * w; the row is still in L1/L2.
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        yr[c] = xr[c] * rstd * w[c];
}

// Threads per row: one warp up to 1024 columns, doubling while each thread would get more than 16
// elements, at most 256 (8 warps). Always a multiple of 32, as the full-mask shuffles need. Many
// elements per thread keep the loads in flight on the GPU and cost the CPU emulator 4x less than
// 4 per thread (it runs every CUDA thread: 0.22 s instead of 0.85 s for a 512 x 512 softmax).
// A conditional, not a loop: opforge's static check allows no loops in host code.
static int row_threads(int cols) {
    return cols > 4096 ? 256 : cols > 2048 ? 128 : cols > 1024 ? 64 : 32;
}

extern "C" void rms_norm_launch(const float* x, const float* w, float* y, int rows, int cols,
                                float eps, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;  // an empty grid is a launch error
    rms_norm_kernel<<<rows, row_threads(cols), 0, stream>>>(x, w, y, cols, eps);
}
"""
_lib = load_cuda(CUDA_SRC)


class ModelNew(torch.nn.Module):
    def __init__(self, hidden):
        super().__init__()
        # Same parameter name and shape as the spec so its state_dict loads here.
        self.weight = torch.nn.Parameter(torch.randn(hidden))
        self.eps = 1e-6

    def forward(self, x):
        x = x.contiguous()  # the kernel walks dense rows of the last dim
        y = torch.empty_like(x)
        cols = x.shape[-1]
        rows = x.numel() // cols if cols > 0 else 0
        _lib.rms_norm_launch(x, self.weight.contiguous(), y, rows, cols, self.eps)
        return y
