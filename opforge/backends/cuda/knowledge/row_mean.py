"""Known-good CUDA row_mean: mean of each row over the last dim, one block per row (strided,
coalesced loads into a per-thread fp32 accumulator, then a warp-shuffle + shared-memory block
reduction)."""
import torch

from opforge.cuda import load_cuda

CUDA_SRC = r"""
#include <cuda_runtime.h>
#include <cmath>

#define FULL_MASK 0xffffffffu

#define IDENTITY 0.f
__device__ __forceinline__ float combine(float a, float b) { return a + b; }

// Butterfly (xor) reduction: every lane ends with the warp's result, bitwise the same in each
// lane. The full mask is right only because all 32 lanes of every warp reach this call
// (blockDim.x is a multiple of 32 and no thread returns before it).
__device__ __forceinline__ float warp_reduce(float v) {
    #pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        v = combine(v, __shfl_xor_sync(FULL_MASK, v, offset));
    return v;
}

// The block's result in every thread: each warp reduces, lane 0 parks it in shared memory, and
// after the barrier every warp reduces the (at most 32) partials itself, so no second broadcast
// is needed. Every thread of the block must call it.
__device__ __forceinline__ float block_reduce(float v) {
    __shared__ float partial[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    v = warp_reduce(v);
    if (lane == 0) partial[warp] = v;
    __syncthreads();                       // every warp's partial is written before any is read
    return warp_reduce(lane < warps ? partial[lane] : IDENTITY);
}

__global__ void __launch_bounds__(256) row_mean_kernel(const float* __restrict__ x,
                                                       float* __restrict__ out, int cols) {
    const float* xr = x + (int64_t)blockIdx.x * cols;   // int64: rows * cols may pass 2**31
    float acc = IDENTITY;                               // fp32; cols == 0 gives 0 / 0 = NaN, like torch.mean
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        acc = combine(acc, xr[c]);
    acc = block_reduce(acc);
    if (threadIdx.x == 0) out[blockIdx.x] = acc / (float)cols;
}

// Threads per row: one warp up to 1024 columns, doubling while each thread would get more than 16
// elements, at most 256 (8 warps). Always a multiple of 32, as the full-mask shuffles need. Many
// elements per thread keep the loads in flight on the GPU and cost the CPU emulator 4x less than
// 4 per thread (it runs every CUDA thread: 0.22 s instead of 0.85 s for a 512 x 512 softmax).
// A conditional, not a loop: opforge's static check allows no loops in host code.
static int row_threads(int cols) {
    return cols > 4096 ? 256 : cols > 2048 ? 128 : cols > 1024 ? 64 : 32;
}

extern "C" void row_mean_launch(const float* x, float* out, int rows, int cols, cudaStream_t stream) {
    if (rows <= 0) return;  // an empty grid is a launch error
    row_mean_kernel<<<rows, row_threads(cols), 0, stream>>>(x, out, cols);
}
"""
_lib = load_cuda(CUDA_SRC)


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()  # the kernel walks dense rows of the last dim
        out = torch.empty(x.shape[:-1], dtype=x.dtype, device=x.device)
        cols = x.shape[-1]
        _lib.row_mean_launch(x, out, out.numel(), cols)
        return out
