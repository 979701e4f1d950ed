"""Known-good CUDA layer_norm: LayerNorm over the last dim with affine weight and bias, one block
per row (two-pass mean and variance with warp-shuffle + shared-memory block sums, then one pass
that normalises, scales, shifts and writes)."""
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

// The block's total in every thread. Called twice per row, so it ends with a barrier: without it
// a fast warp's lane 0 could overwrite partial[] for the second sum while a slow warp is still
// reading the first one's partials (a race).
__device__ __forceinline__ float block_sum(float v, float* partial) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    v = warp_sum(v);
    if (lane == 0) partial[warp] = v;
    __syncthreads();                       // every warp's partial is written before any is read
    v = warp_sum(lane < warps ? partial[lane] : 0.f);
    __syncthreads();                       // every warp has read partial[] before it is reused
    return v;
}

__global__ void __launch_bounds__(256) layer_norm_kernel(const float* __restrict__ x,
                                                         const float* __restrict__ w,
                                                         const float* __restrict__ b,
                                                         float* __restrict__ y, int cols, float eps) {
    __shared__ float partial[32];
    const int64_t base = (int64_t)blockIdx.x * cols;   // int64: rows * cols may pass 2**31
    const float* xr = x + base;
    float* yr = y + base;

    // Pass 1: mean, fp32, strided so consecutive threads read consecutive addresses.
    float acc = 0.f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) acc += xr[c];
    const float mean = block_sum(acc, partial) / (float)cols;

    // Pass 2: biased variance as mean((x - mean)^2). Two passes avoid the cancellation of
    // E[x^2] - mean^2 when |mean| is large against the spread.
    acc = 0.f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float d = xr[c] - mean;
        acc += d * d;
    }
    const float rstd = rsqrtf(block_sum(acc, partial) / (float)cols + eps);

    // Pass 3: normalise, scale, shift; the row is still in L1/L2.
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        yr[c] = (xr[c] - mean) * rstd * w[c] + b[c];
}

// Threads per row: one warp up to 1024 columns, doubling while each thread would get more than 16
// elements, at most 256 (8 warps). Always a multiple of 32, as the full-mask shuffles need. Many
// elements per thread keep the loads in flight on the GPU and cost the CPU emulator 4x less than
// 4 per thread (it runs every CUDA thread: 0.22 s instead of 0.85 s for a 512 x 512 softmax).
// A conditional, not a loop: opforge's static check allows no loops in host code.
static int row_threads(int cols) {
    return cols > 4096 ? 256 : cols > 2048 ? 128 : cols > 1024 ? 64 : 32;
}

extern "C" void layer_norm_launch(const float* x, const float* w, const float* b, float* y,
                                  int rows, int cols, float eps, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;  // an empty grid is a launch error
    layer_norm_kernel<<<rows, row_threads(cols), 0, stream>>>(x, w, b, y, cols, eps);
}
"""
_lib = load_cuda(CUDA_SRC)


class ModelNew(torch.nn.Module):
    def __init__(self, hidden):
        super().__init__()
        # Same submodule name as the spec so the state_dicts match; only its tensors are read.
        self.norm = torch.nn.LayerNorm(hidden, eps=1e-5)

    def forward(self, x):
        x = x.contiguous()  # the kernel walks dense rows of the last dim
        y = torch.empty_like(x)
        cols = x.shape[-1]
        rows = x.numel() // cols if cols > 0 else 0
        _lib.layer_norm_launch(x, self.norm.weight.contiguous(), self.norm.bias.contiguous(), y,
                               rows, cols, self.norm.eps)
        return y
